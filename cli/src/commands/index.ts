// Every `offsetsync` subcommand, in the order `offsetsync --help` lists them.
import type { Command } from '../command.js';
import { sandboxCommand } from './sandbox.js';
import { serviceCommands } from './service-commands.js';

export const commands: readonly Command[] = [...serviceCommands, sandboxCommand];
