import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../command.js';
import { parseCutoverArgs, runCutover } from './cutover.js';

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
      dryRun: false,
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
      '--dry-run',
    ]);
    expect(args).toMatchObject({
      dryRun: true,
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

describe('runCutover', () => {
  const dir = mkdtempSync(join(tmpdir(), 'offsetsync-cutover-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("refuses at once a group the link's filter keeps off the target, naming the filter", async () => {
    const file = join(dir, 'offsetsync.yaml');
    // Nothing listens on these addresses: the refusal needs no cluster and no health service.
    writeFileSync(
      file,
      [
        'clusters:',
        "  onprem: { bootstrapServers: ['127.0.0.1:1'] }",
        "  cloud: { bootstrapServers: ['127.0.0.1:2'] }",
        "  dr: { bootstrapServers: ['127.0.0.1:3'] }",
        'links:',
        "  - { source: onprem, target: cloud, groups: { exclude: ['^onprem-only-'] } }",
        '  - { source: onprem, target: dr }',
        '',
      ].join('\n'),
    );
    const out: string[] = [];
    const io = { stdout: (t: string) => out.push(t), stderr: (t: string) => out.push(t) };
    const args = ['--config', file, '--group', 'onprem-only-billing', '--from', 'onprem', '--timeout', '1s'];
    // Had it asked anyone, the blocks would say UNREACHABLE: EXCLUDED alone means it decided from the config.
    await expect(runCutover([...args, '--to', 'cloud', '--json'], io)).resolves.toBe(1);
    expect(JSON.parse(out.join(''))).toEqual({
      group: 'onprem-only-billing',
      from: 'onprem',
      to: 'cloud',
      safe: false,
      proofs: [],
      blocks: [
        {
          code: 'EXCLUDED',
          partition: '',
          message: 'the group is never sent to cloud: the link\'s groups exclude "^onprem-only-"',
        },
      ],
    });
  });

  it('refuses at once a cutover to a link that observes, pointing to --dry-run', async () => {
    const file = join(dir, 'observing.yaml');
    writeFileSync(
      file,
      [
        'clusters:',
        "  onprem: { bootstrapServers: ['127.0.0.1:1'] }",
        "  cloud: { bootstrapServers: ['127.0.0.1:2'] }",
        'links:',
        '  - { source: onprem, target: cloud, mode: observe }',
        '',
      ].join('\n'),
    );
    const out: string[] = [];
    const io = { stdout: (t: string) => out.push(t), stderr: (t: string) => out.push(t) };
    const args = ['--config', file, '--group', 'billing', '--from', 'onprem', '--to', 'cloud'];
    await expect(runCutover([...args, '--timeout', '1s', '--json'], io)).resolves.toBe(1);
    const outcome = JSON.parse(out.join('')) as { blocks: { code: string; message: string }[] };
    expect(outcome.blocks.map((b) => b.code)).toEqual(['OBSERVED']);
    expect(outcome.blocks[0]?.message).toContain('--dry-run shows what it would commit');

    // --dry-run asks (here: nobody answers) instead of refusing, and does not wait for --timeout.
    out.length = 0;
    const started = Date.now();
    await expect(
      runCutover([...args, '--dry-run', '--json', '--address', '127.0.0.1:3', '--timeout', '1m'], io),
    ).resolves.toBe(1);
    const asked = JSON.parse(out.join('')) as { blocks: { code: string }[]; plan: unknown[] };
    expect(asked.blocks.map((b) => b.code)).toContain('UNREACHABLE');
    expect(asked.plan).toEqual([]);
    expect(Date.now() - started).toBeLessThan(60_000);
  });
});
