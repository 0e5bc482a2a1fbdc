import { describe, expect, it } from 'vitest';
import { UsageError } from '../command.js';
import { sandboxDescription } from './sandbox-help.js';
import { parseSandboxArgs } from './sandbox.js';

describe('offsetsync sandbox command line', () => {
  it('runs with defaults and takes topic, group, partitions and records', () => {
    expect(parseSandboxArgs([])).toEqual({});
    expect(
      parseSandboxArgs(['--topic', 'orders', '--group', 'billing', '--partitions', '4', '--records', '500']),
    ).toEqual({ topic: 'orders', group: 'billing', partitions: 4, recordsPerPartition: 500 });
    expect(parseSandboxArgs(['--prometheus', '--records', '500'])).toEqual({
      prometheus: true,
      recordsPerPartition: 500,
    });
  });

  it('refuses unknown options, missing values and numbers out of range as usage errors', () => {
    for (const argv of [
      ['--verbose'],
      ['--topic'],
      ['--group', '--topic'],
      ['--partitions', '0'],
      ['--records', '10'],
      ['--records', 'many'],
    ]) {
      expect(() => parseSandboxArgs(argv), argv.join(' ')).toThrow(UsageError);
    }
  });

  it('documents what it starts and how it stops', () => {
    expect(sandboxDescription.help).toContain('MirrorMaker 2');
    expect(sandboxDescription.help).toMatch(/moved group <group> to <target>: replayed=<n> skipped=<n>/);
    expect(sandboxDescription.help).toContain('source.<topic>');
    expect(sandboxDescription.help).toContain('Ctrl-C');
    expect(sandboxDescription.help).toContain('--prometheus');
  });
});
