// `offsetsync cutover` against the real services: it refuses while the group still has members on the
// source, and says it is safe once the group stopped and its last commits are applied exactly on the
// target and proven there, which a consumer of the group on the target then confirms by replaying and
// skipping nothing; and it refuses, with the reason, a target position one record off.
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { stringify } from 'yaml';
import type { Kafka as KafkaClient } from 'kafkajs';
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
  group: string;
  from: string;
  to: string;
  safe: boolean;
  blocks: { code: string; partition: string; message: string }[];
  proofs: {
    partition: string;
    sourceOffset: number;
    targetOffset: number | null;
    nextRecord: string;
    examined: number;
    consumedCopies: number;
    proven: boolean;
    failure: string | null;
    message: string;
  }[];
}

/** Runs the built `offsetsync cutover`; resolves to its exit code and parsed --json output. */
async function cutover(configFile: string, group: string, timeout: string) {
  const args = [CLI, 'cutover', '-c', configFile, '--group', group, '--from', 'source', '--to', 'target'];
  const run = promisify(execFile)(
    process.execPath,
    [...args, '--timeout', timeout, '--interval', '250ms', '--json'],
    {
      // A cutover that does not end on its own --timeout is a failure of its own, not a test timeout.
      timeout: 90_000,
      env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OFFSETSYNC_'))),
    },
  );
  try {
    const { stdout } = await run;
    return { code: 0, out: JSON.parse(stdout) as CutoverOutput };
  } catch (error: unknown) {
    const failed = error as { code?: number; killed?: boolean; stdout?: string; stderr?: string };
    if (failed.code !== 1 || !failed.stdout) {
      throw new Error(
        `cutover ${failed.killed ? 'was killed' : `exited ${failed.code}`}: ${failed.stderr}${failed.stdout}`,
      );
    }
    return { code: 1, out: JSON.parse(failed.stdout) as CutoverOutput };
  }
}

/** Writes a config for the test's group, link and health port; returns the config and its file. */
async function writeConfig(group: string) {
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
  return { config, configFile };
}

/**
 * The ids (record values `id:<n>`) a consumer of `group` on the target reads from its committed offsets
 * up to the end of each partition as it is now.
 */
async function readOnTarget(
  kafka: KafkaClient,
  topic: string,
  group: string,
  partitions: number,
): Promise<number[]> {
  const admin = await connectedAdmin(kafka);
  const ends = new Map(
    (await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)] as const),
  );
  const committed = (await admin.fetchOffsets({ groupId: group, topics: [topic] }))[0]!.partitions;
  const done = new Set(
    committed.filter((p) => Number(p.offset) >= (ends.get(p.partition) ?? 0)).map((p) => p.partition),
  );
  const ids: number[] = [];
  const consumer = kafka.consumer({ groupId: group, sessionTimeout: 10_000 });
  await consumer.connect();
  onTestFinished(() => consumer.disconnect());
  await consumer.subscribe({ topic, fromBeginning: true });
  await new Promise<void>((resolve, reject) => {
    if (done.size === partitions) resolve();
    consumer
      .run({
        autoCommit: false,
        eachBatch: ({ batch }) => {
          const end = ends.get(batch.partition) ?? 0;
          for (const m of batch.messages) {
            if (Number(m.offset) < end) ids.push(Number(m.value!.toString().slice('id:'.length)));
          }
          if (Number(batch.lastOffset()) + 1 >= end) done.add(batch.partition);
          if (done.size === partitions) resolve();
          return Promise.resolve();
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();
  return ids;
}

describe('offsetsync cutover', () => {
  it(
    'refuses while the group is active on the source, says safe after it stops, and a consumer on the target then replays nothing and skips nothing',
    { timeout: 180_000 },
    async () => {
      const topic = uniqueName('cutover');
      const group = uniqueName('cutover-app');
      const { config, configFile } = await writeConfig(group);

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
      // A replicator that writes some runs twice, as one does after a restart: duplicates on the target.
      const replicator = await startReplicator({
        source: testbed.source,
        target: testbed.target,
        topic,
        maxBatchRecords: 10,
        duplicates: { probability: 0.3, seed: 5 },
      });
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

      // Long enough for the health service to answer; the application's member keeps it refused.
      const refused = await cutover(configFile, group, '10s');
      expect(refused.code).toBe(1);
      expect(refused.out.safe).toBe(false);
      expect(refused.out.blocks.map((b) => `${b.code}: ${b.message}`)).toContainEqual(
        expect.stringMatching(/^ACTIVE_ON_SOURCE: .*1 member\(s\) on source/),
      );

      // The application stops on the source (its last offsets committed on the way out). Records it never
      // read arrive on partition 0 afterwards; partition 1 stays consumed to its end.
      await consumer.disconnect();
      await producer.send({
        topic,
        messages: Array.from({ length: 40 }, (_, i) => ({
          partition: 0,
          key: `k${120 + i}`,
          value: `id:${120 + i}`,
        })),
      });
      await replicator.waitUntilCaughtUp(60_000);
      expect(replicator.progress().reduce((n, p) => n + p.duplicates, 0)).toBeGreaterThan(0);
      const safe = await cutover(configFile, group, '60s');
      expect([safe.code, safe.out.blocks]).toEqual([0, []]);
      expect(safe.out).toMatchObject({ group, from: 'source', to: 'target', safe: true, blocks: [] });
      const proofs = [...safe.out.proofs].sort((a, b) => a.partition.localeCompare(b.partition));
      expect(
        proofs.map((p) => [p.partition, p.sourceOffset, p.nextRecord, p.consumedCopies, p.proven]),
      ).toEqual([
        [`${topic}-0`, 60, 'match', 0, true],
        [`${topic}-1`, 60, 'none', 0, true],
      ]);
      // Every record from t on was examined: the 40 unread ones on partition 0, with their duplicates.
      expect(proofs[0]!.examined).toBeGreaterThanOrEqual(40);

      // And it is right: the group on the target reads exactly the records it never read on the source.
      const ids = await readOnTarget(kafkaClient(testbed.target.bootstrapServers), topic, group, 2);
      const replayed = ids.filter((id) => id < 120).length;
      const unread = Array.from({ length: 40 }, (_, i) => 120 + i);
      const skipped = unread.filter((id) => !ids.includes(id)).length;
      expect({ replayed, skipped }).toEqual({ replayed: 0, skipped: 0 });
    },
  );

  it(
    'refuses a target position one record too early (a replay) or too late (a skip), with the reason',
    { timeout: 180_000 },
    async () => {
      const topic = uniqueName('cutover-off');
      const group = uniqueName('cutover-off-app');
      const { config, configFile } = await writeConfig(group);
      const source = kafkaClient(testbed.source.bootstrapServers);
      const sourceAdmin = await connectedAdmin(source);
      await sourceAdmin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
      const producer = source.producer();
      await producer.connect();
      onTestFinished(() => producer.disconnect());
      await producer.send({
        topic,
        messages: Array.from({ length: 80 }, (_, i) => ({
          partition: i % 2,
          key: `k${i}`,
          value: `id:${i}`,
        })),
      });
      const replicator = await startReplicator({ source: testbed.source, target: testbed.target, topic });
      await replicator.waitUntilCaughtUp(60_000);
      const services = Object.fromEntries(
        await Promise.all(
          (['collector', 'translator', 'committer', 'health'] as const).map(
            async (role) => [role, await startService(role, config)] as const,
          ),
        ),
      );
      // The application read 25 records of each partition on the source and stopped.
      await sourceAdmin.setOffsets({
        groupId: group,
        topic,
        partitions: [
          { partition: 0, offset: '25' },
          { partition: 1, offset: '25' },
        ],
      });
      const synced = await cutover(configFile, group, '60s');
      expect([synced.code, synced.out.blocks]).toEqual([0, []]);
      const exact = new Map(synced.out.proofs.map((p) => [p.partition, p.targetOffset!]));
      expect([...exact.values()]).toEqual([25, 25]);

      // With offsetsync's committer stopped, someone moves the group on the target one record off.
      await services.committer!.stop();
      const targetAdmin = await connectedAdmin(kafkaClient(testbed.target.bootstrapServers));
      await targetAdmin.setOffsets({
        groupId: group,
        topic,
        partitions: [
          { partition: 0, offset: String(exact.get(`${topic}-0`)! - 1) },
          { partition: 1, offset: String(exact.get(`${topic}-1`)! + 1) },
        ],
      });
      const refused = await cutover(configFile, group, '2s');
      expect(refused.code).toBe(1);
      expect(refused.out.safe).toBe(false);
      const blocks = [...refused.out.blocks].sort((a, b) => a.partition.localeCompare(b.partition));
      expect(blocks.map((b) => [b.code, b.partition])).toEqual([
        ['REPLAY_ON_TARGET', `${topic}-0`],
        ['NOT_PROVEN', `${topic}-1`],
      ]);
      expect(blocks[0]!.message).toMatch(/copies of records the group already consumed/);
      expect(blocks[1]!.message).toMatch(/is not the counterpart of the next source record/);
      const proofs = [...refused.out.proofs].sort((a, b) => a.partition.localeCompare(b.partition));
      expect(proofs.map((p) => [p.targetOffset, p.nextRecord, p.consumedCopies, p.failure])).toEqual([
        [24, 'mismatch', 1, 'REPLAY'],
        [26, 'mismatch', 0, 'NEXT_RECORD_MISMATCH'],
      ]);
    },
  );
});
