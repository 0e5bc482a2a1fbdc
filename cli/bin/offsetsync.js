#!/usr/bin/env node
// Checked-in launcher, so that `npm ci` links the `offsetsync` command before anything is built.
import { existsSync } from 'node:fs';
import process from 'node:process';
import { URL } from 'node:url';

const main = new URL('../dist/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('offsetsync: not built yet; run `npm run build` in the offsetsync checkout first\n');
  process.exit(1);
}
await import(main.href);
