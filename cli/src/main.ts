#!/usr/bin/env node
// The `offsetsync` command line: one entry point for the four services and the operator tools.
import { commands } from './commands/index.js';
import { dispatch } from './dispatch.js';

process.exitCode = await dispatch(process.argv.slice(2), commands, {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
