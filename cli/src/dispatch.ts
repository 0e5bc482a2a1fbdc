// Picks the subcommand named by the first argument and runs it; prints help and usage errors.
import { type Command, type CommandIo, EXIT_USAGE, UsageError, wantsHelp } from './command.js';

/** The text of `offsetsync --help`. */
export function topLevelHelp(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  const lines = commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return `offsetsync: moves Kafka consumer groups between clusters without replaying or skipping records.

Usage: offsetsync <command> [options]

Commands:
${lines.join('\n')}

Run \`offsetsync <command> --help\` for a command's options and examples.
With no command, \`npm start\` runs \`offsetsync sandbox\`.
`;
}

/**
 * Runs `offsetsync <command> ...argv`. Resolves to the exit code; never exits the process itself, so it
 * can be tested with buffers for stdout and stderr.
 */
export async function dispatch(
  argv: readonly string[],
  commands: readonly Command[],
  io: CommandIo,
): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? commands.find((c) => c.name === rest[0]) : undefined;
    io.stdout(topic ? topic.help : topLevelHelp(commands));
    return name === undefined ? EXIT_USAGE : 0;
  }
  const command = commands.find((c) => c.name === name);
  if (command === undefined) {
    io.stderr(`offsetsync: unknown command "${name}"\n\n${topLevelHelp(commands)}`);
    return EXIT_USAGE;
  }
  if (wantsHelp(rest)) {
    io.stdout(command.help);
    return 0;
  }
  try {
    return await command.run(rest, io);
  } catch (error: unknown) {
    if (error instanceof UsageError) {
      io.stderr(
        `offsetsync ${command.name}: ${error.message}\nRun \`offsetsync ${command.name} --help\` for usage.\n`,
      );
      return EXIT_USAGE;
    }
    throw error;
  }
}
