import { describe, expect, it } from 'vitest';
import { UsageError } from '../command.js';
import { parseCutoverArgs } from './cutover.js';

describe('parseCutoverArgs', () => {
  const base = ['--group', 'billing', '--from', 'onprem', '--to', 'cloud'];

  it('takes the group and link, with defaults for waiting', () => {
    expect(parseCutoverArgs(base)).toEqual({
      group: 'billing',
      from: 'onprem',
      to: 'cloud',
      config: undefined,
      connection: { address: undefined, tls: false },
      timeoutMs: 120_000,
      intervalMs: 1_000,
      json: false,
    });
  });

  it('reads durations in words and the other options', () => {
    const args = parseCutoverArgs([
      ...base,
      '-c',
      'o.yaml',
      '--timeout',
      '10m',
      '--interval',
      '250ms',
      '--json',
    ]);
    expect(args).toMatchObject({ config: 'o.yaml', timeoutMs: 600_000, intervalMs: 250, json: true });
  });

  it('names what is missing or wrong as a usage error', () => {
    expect(() => parseCutoverArgs(['--group', 'g'])).toThrow(new UsageError('missing --from, --to'));
    expect(() => parseCutoverArgs([...base, '--timeout', 'soon'])).toThrow(/--timeout/);
    expect(() => parseCutoverArgs([...base, '--wait'])).toThrow(UsageError);
  });
});
