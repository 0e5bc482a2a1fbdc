// What every `offsetsync` subcommand provides, and the error a command line that makes no sense raises.
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';

/** Where a command writes what it has to say; the process's streams in production, buffers in tests. */
export interface CommandIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** What `offsetsync --help` and `offsetsync <name> --help` show of a subcommand. */
export interface CommandDescription {
  /** The word that selects it: `offsetsync <name> ...`. */
  readonly name: string;
  /** One line for the list of commands. */
  readonly summary: string;
  /** The whole `--help` text: usage, options and examples. */
  readonly help: string;
}

/** Runs a command with the arguments after its name; resolves to the process exit code. */
export type CommandRun = (argv: readonly string[], io: CommandIo) => Promise<number>;

/** One subcommand of `offsetsync`. */
export interface Command extends CommandDescription {
  run: CommandRun;
}

/**
 * A command whose module is imported only when it runs: listing the commands or printing a command's
 * help loads none of them, and running one loads only its own (the services, gRPC, the sandbox's
 * launcher of real servers).
 */
export function lazyCommand(description: CommandDescription, load: () => Promise<CommandRun>): Command {
  return {
    ...description,
    run: async (argv, io) => (await load())(argv, io),
  };
}

/** A command line that cannot be run as written. Exit code 64 (EX_USAGE). */
export class UsageError extends OffsetSyncError {
  constructor(message: string) {
    super(message, { code: ErrorCodes.CLI_USAGE, retryable: false });
  }
}

/** Exit code for a command line that cannot be run as written (sysexits EX_USAGE). */
export const EXIT_USAGE = 64;

/** True when the arguments ask for help rather than for work. */
export function wantsHelp(argv: readonly string[]): boolean {
  return argv.includes('--help') || argv.includes('-h');
}
