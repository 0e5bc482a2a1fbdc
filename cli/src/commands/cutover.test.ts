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
      proofWindow: 500,
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
      '--proof-window',
      '10000',
      '--json',
    ]);
    expect(args).toMatchObject({
      config: 'o.yaml',
      timeoutMs: 600_000,
      intervalMs: 250,
      proofWindow: 10_000,
      json: true,
    });
  });

  it('names what is missing or wrong as a usage error', () => {
    expect(() => parseCutoverArgs(['--group', 'g'])).toThrow(new UsageError('missing --from, --to'));
    expect(() => parseCutoverArgs([...base, '--timeout', 'soon'])).toThrow(/--timeout/);
    expect(() => parseCutoverArgs([...base, '--wait'])).toThrow(UsageError);
    for (const bad of ['0', '10001', '5e2', '-1', '']) {
      expect(() => parseCutoverArgs([...base, `--proof-window=${bad}`])).toThrow(
        /--proof-window: .*1 to 10000/,
      );
    }
  });
});
