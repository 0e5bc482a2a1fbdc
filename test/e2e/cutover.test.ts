// `offsetsync cutover` against the real services: it refuses while the group still has members on the
// source, and says it is safe once the group stopped and its last commits are applied exactly on the target.
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { stringify } from 'yaml';
import { startReplicator, startService } from '@offsetsync/harness';
import { freePort } from '../infra/free-port.js';
import { REPO_ROOT } from '../infra/testbed.js';
import { waitFor } from '../infra/wait.js';
import { testConfig } from '../support/config.js';
import { connectedAdmin, kafkaClient } from '../support/kafka-clients.js';
import { uniqueName } from '../support/names.js';

const testbed = inject('testbed');
const CLI = join(REPO_ROOT, 'cli', 'bin', 'offsetsync.js');

interface CutoverOutput {
  safe: boolean;
  blocks: { code: string; partition: string; message: string }[];
}

/** Runs the built `offsetsync cutover`; resolves to its exit code and parsed --json output. */
async function cutover(configFile: string, group: string, timeout: string) {
  const args = [CLI, 'cutover', '-c', configFile, '--group', group, '--from', 'source', '--to', 'target'];
  const run = promisify(execFile)(
    process.execPath,
    [...args, '--timeout', timeout, '--interval', '250ms', '--json'],
    {
      env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OFFSETSYNC_'))),
    },
  );
  try {
    const { stdout } = await run;
    return { code: 0, out: JSON.parse(stdout) as CutoverOutput };
  } catch (error: unknown) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    if (failed.code !== 1 || !failed.stdout) throw error;
    return { code: 1, out: JSON.parse(failed.stdout) as CutoverOutput };
  }
}

describe('offsetsync cutover', () => {
  it(
    'refuses while the group is active on the source and succeeds after it stops',
    { timeout: 180_000 },
    async () => {
      const topic = uniqueName('cutover');
      const group = uniqueName('cutover-app');
      const port = await freePort();
      const config = testConfig(testbed, {
        heartbeat: { intervalMs: '500ms' },
        collector: { cluster: 'source', groups: { include: [`^${group}$`] } },
        translator: { target: 'target' },
        committer: { target: 'target' },
        health: { grpc: { host: '127.0.0.1', port } },
      });
      const dir = await mkdtemp(join(tmpdir(), 'offsetsync-cutover-'));
      const configFile = join(dir, 'offsetsync.yaml');
      await writeFile(configFile, stringify(config));

      const source = kafkaClient(testbed.source.bootstrapServers);
      await (
        await connectedAdmin(source)
      ).createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
      const producer = source.producer();
      await producer.connect();
      onTestFinished(() => producer.disconnect());
      await producer.send({
        topic,
        messages: Array.from({ length: 120 }, (_, i) => ({
          partition: i % 2,
          key: `k${i}`,
          value: `id:${i}`,
        })),
      });
      const replicator = await startReplicator({ source: testbed.source, target: testbed.target, topic });
      await replicator.waitUntilCaughtUp(60_000);
      await Promise.all(
        (['collector', 'translator', 'committer', 'health'] as const).map((role) =>
          startService(role, config),
        ),
      );

      // The application runs on the source: a member of the group, committing as it reads.
      const consumer = source.consumer({ groupId: group, sessionTimeout: 10_000 });
      await consumer.connect();
      onTestFinished(() => consumer.disconnect());
      await consumer.subscribe({ topic, fromBeginning: true });
      let consumed = 0;
      await consumer.run({
        autoCommitInterval: 100,
        eachMessage: () => {
          consumed += 1;
          return Promise.resolve();
        },
      });
      await waitFor(
        'the application to read everything',
        () => Promise.resolve(consumed >= 120 || undefined),
        {
          timeoutMs: 60_000,
          intervalMs: 100,
        },
      );

      const refused = await cutover(configFile, group, '2s');
      expect(refused.code).toBe(1);
      expect(refused.out.safe).toBe(false);
      expect(refused.out.blocks.map((b) => b.code)).toContain('ACTIVE_ON_SOURCE');
      expect(refused.out.blocks.find((b) => b.code === 'ACTIVE_ON_SOURCE')!.message).toMatch(
        /1 member\(s\) on source/,
      );

      // The application stops on the source (its last offsets committed on the way out).
      await consumer.disconnect();
      const safe = await cutover(configFile, group, '60s');
      expect(safe).toEqual({ code: 0, out: { group, from: 'source', to: 'target', safe: true, blocks: [] } });

      // And it is right: the target holds, for each partition, the offset after the last record read there.
      const targetAdmin = await connectedAdmin(kafkaClient(testbed.target.bootstrapServers));
      const [committed] = await targetAdmin.fetchOffsets({ groupId: group, topics: [topic] });
      expect(committed!.partitions.map((p) => [p.partition, p.offset]).sort()).toEqual([
        [0, '60'],
        [1, '60'],
      ]);
    },
  );
});
