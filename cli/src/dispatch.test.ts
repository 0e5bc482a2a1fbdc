import { describe, expect, it } from 'vitest';
import { type Command, EXIT_USAGE, UsageError } from './command.js';
import { dispatch, topLevelHelp } from './dispatch.js';

function recorder() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { stdout: (t: string) => out.push(t), stderr: (t: string) => err.push(t) }, out, err };
}

function fake(name: string, run: Command['run']): Command {
  return { name, summary: `does ${name}`, help: `help of ${name}\n`, run };
}

describe('dispatch', () => {
  const seen: (readonly string[])[] = [];
  const commands = [
    fake('alpha', (argv) => {
      seen.push(argv);
      return Promise.resolve(3);
    }),
    fake('beta', () => Promise.reject(new UsageError('--group is required'))),
    fake('gamma', () => Promise.reject(new Error('boom'))),
  ];

  it('runs the named command with the remaining arguments and returns its exit code', async () => {
    const { io } = recorder();
    await expect(dispatch(['alpha', '--x', '1'], commands, io)).resolves.toBe(3);
    expect(seen.at(-1)).toEqual(['--x', '1']);
  });

  it('lists every command in the top-level help; no command at all is a usage error', async () => {
    const { io, out } = recorder();
    await expect(dispatch(['--help'], commands, io)).resolves.toBe(0);
    expect(out.join('')).toBe(topLevelHelp(commands));
    expect(out.join('')).toMatch(/alpha\s+does alpha\n\s+beta\s+does beta/);
    await expect(dispatch([], commands, recorder().io)).resolves.toBe(EXIT_USAGE);
  });

  it("prints a command's help for `<command> --help` and `help <command>` without running it", async () => {
    const before = seen.length;
    const a = recorder();
    await expect(dispatch(['alpha', '--help'], commands, a.io)).resolves.toBe(0);
    const b = recorder();
    await expect(dispatch(['help', 'alpha'], commands, b.io)).resolves.toBe(0);
    expect(a.out.join('')).toBe('help of alpha\n');
    expect(b.out.join('')).toBe('help of alpha\n');
    expect(seen.length).toBe(before);
  });

  it('names an unknown command on stderr with the usage exit code', async () => {
    const { io, err } = recorder();
    await expect(dispatch(['delta'], commands, io)).resolves.toBe(EXIT_USAGE);
    expect(err.join('')).toContain('unknown command "delta"');
  });

  it('turns a UsageError into the message and a pointer to the help; other errors propagate', async () => {
    const { io, err } = recorder();
    await expect(dispatch(['beta'], commands, io)).resolves.toBe(EXIT_USAGE);
    expect(err.join('')).toBe(
      'offsetsync beta: --group is required\nRun `offsetsync beta --help` for usage.\n',
    );
    await expect(dispatch(['gamma'], commands, recorder().io)).rejects.toThrow('boom');
  });
});
