// Every `offsetsync` subcommand, in the order `offsetsync --help` lists them.
import type { Command } from '../command.js';
import { cutoverCommand } from './cutover.js';
import { sandboxCommand } from './sandbox.js';
import { serviceCommands } from './service-commands.js';
import { statusCommand } from './status.js';

export const commands: readonly Command[] = [
  ...serviceCommands,
  statusCommand,
  cutoverCommand,
  sandboxCommand,
];
