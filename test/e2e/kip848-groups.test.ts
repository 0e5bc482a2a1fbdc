// KIP-848 consumer-protocol groups (`group.protocol=consumer`, Kafka's console consumer) against the real
// services: DescribeGroups reports such a group as Dead even while it runs, so these guard that
// `offsetsync cutover` still refuses while one runs on the source, and that one running on the target is
// reported as active there and its offsets left alone.
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { stringify } from 'yaml';
import { ApplyOutcome, Names, OffsetApplied, PartitionSyncState, SkipReason } from '@offsetsync/contracts';
import { startReplicator, startService } from '@offsetsync/harness';
import { freePort } from '../infra/free-port.js';
import { startConsoleConsumer } from '../infra/kafka-tools.js';
import { REPO_ROOT } from '../infra/testbed.js';
import { waitFor } from '../infra/wait.js';
import { testConfig } from '../support/config.js';
import { healthClients } from '../support/health-client.js';
import { lastOnSubject, natsConnection } from '../support/jetstream.js';
import { connectedAdmin, kafkaClient, testAdapter } from '../support/kafka-clients.js';
import { uniqueName } from '../support/names.js';

const testbed = inject('testbed');
const CLI = join(REPO_ROOT, 'cli', 'bin', 'offsetsync.js');
const PARTITIONS = 2;
const RECORDS = 120;

interface CutoverOutput {
  safe: boolean;
  blocks: { code: string; partition: string; message: string }[];
}

/**
 * Runs the built `offsetsync cutover --json`; resolves to its exit code (0 or 1) and parsed output. Any
 * other exit, or a command that does not exit on its own within 60 s, fails the test.
 */
async function cutover(configFile: string, group: string, timeout: string) {
  const args = [CLI, 'cutover', '-c', configFile, '--group', group, '--from', 'source', '--to', 'target'];
  const run = promisify(execFile)(
    process.execPath,
    [...args, '--timeout', timeout, '--interval', '250ms', '--json'],
    {
      timeout: 60_000,
      env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OFFSETSYNC_'))),
    },
  );
  try {
    const { stdout } = await run;
    return { code: 0, out: JSON.parse(stdout) as CutoverOutput };
  } catch (error: unknown) {
    const failed = error as { code?: number; killed?: boolean; stdout?: string; stderr?: string };
    const printed = failed.stdout?.endsWith('}\n') === true;
    if (!printed || failed.code !== 1 || failed.killed === true) {
      throw new Error(
        `cutover ${failed.killed === true ? 'was killed' : `exited ${failed.code}`}: ${failed.stderr}${failed.stdout}`,
      );
    }
    return { code: failed.code, out: JSON.parse(failed.stdout!) as CutoverOutput };
  }
}

/**
 * A topic of PARTITIONS x RECORDS on the source, replicated to the target, the four services running for
 * `group`, and the config file the CLI reads.
 */
async function bed(group: string) {
  const topic = uniqueName('kip848');
  const port = await freePort();
  const config = testConfig(testbed, {
    heartbeat: { intervalMs: '500ms' },
    collector: { cluster: 'source', groups: { include: [`^${group}$`] }, fetchMaxWaitMs: '20ms' },
    translator: { target: 'target' },
    committer: { target: 'target', activeGroupRetryMs: '1s' },
    health: { grpc: { host: '127.0.0.1', port } },
  });
  const dir = await mkdtemp(join(tmpdir(), 'offsetsync-kip848-'));
  const configFile = join(dir, 'offsetsync.yaml');
  await writeFile(configFile, stringify(config));

  const source = kafkaClient(testbed.source.bootstrapServers);
  await (
    await connectedAdmin(source)
  ).createTopics({ topics: [{ topic, numPartitions: PARTITIONS }], waitForLeaders: true });
  const producer = source.producer();
  await producer.connect();
  onTestFinished(() => producer.disconnect());
  await producer.send({
    topic,
    messages: Array.from({ length: RECORDS }, (_, i) => ({
      partition: i % PARTITIONS,
      key: `k${i}`,
      value: `id:${i}`,
    })),
  });
  const replicator = await startReplicator({ source: testbed.source, target: testbed.target, topic });
  await replicator.waitUntilCaughtUp(60_000);
  await Promise.all(
    (['collector', 'translator', 'committer', 'health'] as const).map((role) => startService(role, config)),
  );
  const names = new Names(config.nats.subjectPrefix);
  const jsm = await (await natsConnection(testbed.nats.url)).jetstreamManager();
  return {
    topic,
    configFile,
    health: healthClients(`127.0.0.1:${port}`),
    async lastApplied(partition: number): Promise<OffsetApplied | undefined> {
      const message = await lastOnSubject(
        jsm,
        names.stream('applied'),
        names.applied('source', 'target', { group, topic, partition }),
      );
      return message && OffsetApplied.decode(message.data);
    },
  };
}

/** A KIP-848 console consumer of `group` on `bootstrap`, stopped when the test finishes. */
function kip848Consumer(bootstrap: string, topic: string, group: string, properties: Record<string, string>) {
  const consumer = startConsoleConsumer({
    bootstrap,
    topic,
    group,
    groupProtocol: 'consumer',
    extraProperties: properties,
  });
  onTestFinished(() => consumer.stop().then(() => undefined));
  return consumer;
}

describe('KIP-848 consumer-protocol groups', () => {
  it(
    'cutover refuses (ACTIVE_ON_SOURCE) while a KIP-848 consumer runs on the source and is safe once it stopped',
    { timeout: 240_000 },
    async () => {
      const group = uniqueName('kip848-src');
      const b = await bed(group);

      // The application runs on the source as a consumer-protocol member, committing as it reads.
      const app = kip848Consumer(testbed.source.bootstrapServers, b.topic, group, {
        'auto.commit.interval.ms': '200',
      });
      await waitFor(
        'the application to read everything',
        () => Promise.resolve(app.values().length >= RECORDS || undefined),
        { timeoutMs: 90_000, intervalMs: 200 },
      );

      const refused = await cutover(b.configFile, group, '2s');
      expect(refused.code).toBe(1);
      expect(refused.out.safe).toBe(false);
      const active = refused.out.blocks.find((block) => block.code === 'ACTIVE_ON_SOURCE');
      expect(active?.message).toMatch(/1 member\(s\) on source \(state Stable\)/);

      // The application stops on the source (committing its last offsets on the way out): no members.
      expect((await app.stop()).ok).toBe(true);
      const source = testAdapter(testbed.source.bootstrapServers);
      expect(await source.describeGroup(group)).toMatchObject({
        groupType: 'consumer',
        state: 'Empty',
        memberCount: 0,
      });
      // Once its last commits are translated exactly and applied, cutover says safe.
      await waitFor(
        'the last source commits applied exactly on the target',
        async () => {
          const g = await b.health.getGroup('source', 'target', group);
          const synced = g.partitions.filter(
            (p) =>
              p.state === PartitionSyncState.PARTITION_SYNC_STATE_SYNCED &&
              p.exact &&
              p.sourceOffset === RECORDS / PARTITIONS,
          );
          return synced.length === PARTITIONS ? true : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 200 },
      );
      const safe = await cutover(b.configFile, group, '30s');
      expect(safe.out).toMatchObject({ group, from: 'source', to: 'target', safe: true, blocks: [] });
      expect(safe.code).toBe(0);

      // And it is right: the target holds, for each partition, the offset after the last record read there.
      const target = testAdapter(testbed.target.bootstrapServers);
      expect(
        (await target.fetchCommittedOffsets(group, [b.topic])).map((c) => [c.partition, c.offset]),
      ).toEqual([
        [0, RECORDS / PARTITIONS],
        [1, RECORDS / PARTITIONS],
      ]);
    },
  );

  it(
    'reports a KIP-848 consumer running on the target as active on target (ACTIVE_ON_TARGET) and leaves its committed offsets untouched',
    { timeout: 240_000 },
    async () => {
      const group = uniqueName('kip848-tgt');
      const b = await bed(group);
      const source = testAdapter(testbed.source.bootstrapServers);
      const target = testAdapter(testbed.target.bootstrapServers);
      const commitOnSource = async (offset: number) => {
        const answers = await source.commitOffsets(
          group,
          Array.from({ length: PARTITIONS }, (_, partition) => ({
            topic: b.topic,
            partition,
            offset,
            metadata: null,
          })),
        );
        for (const answer of answers) if (answer.error) throw answer.error;
      };
      const targetOffsets = async () =>
        (await target.fetchCommittedOffsets(group, [b.topic])).map((c) => [c.partition, c.offset]);

      // offsetsync brings the group's position to the target first.
      await commitOnSource(20);
      await waitFor(
        'the source position applied on the target',
        async () => {
          const offsets = await targetOffsets();
          return offsets.length === PARTITIONS && offsets.every(([, o]) => o === 20) ? true : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 200 },
      );

      // The application starts on the target as a consumer-protocol member (it reads, it does not commit).
      const app = kip848Consumer(testbed.target.bootstrapServers, b.topic, group, {
        'enable.auto.commit': 'false',
      });
      await waitFor(
        'the application to read on the target',
        () => Promise.resolve(app.values().length >= RECORDS - PARTITIONS * 20 || undefined),
        { timeoutMs: 90_000, intervalMs: 200 },
      );

      // A newer source commit is refused by the target and reported as active on target.
      await commitOnSource(40);
      for (let partition = 0; partition < PARTITIONS; partition++) {
        const skipped = await waitFor(
          `partition ${partition} skipped as active on the target`,
          async () => {
            const a = await b.lastApplied(partition);
            return a?.outcome === ApplyOutcome.APPLY_OUTCOME_SKIPPED && a.sourceOffset === 40 ? a : undefined;
          },
          { timeoutMs: 60_000, intervalMs: 100 },
        );
        expect(skipped.skipReason).toBe(SkipReason.SKIP_REASON_ACTIVE_ON_TARGET);
      }
      const status = await waitFor(
        'health to show the group active on the target',
        async () => {
          const g = await b.health.getGroup('source', 'target', group);
          const states = g.partitions.map((p) => p.state);
          return states.length === PARTITIONS &&
            states.every((s) => s === PartitionSyncState.PARTITION_SYNC_STATE_SKIPPED_ACTIVE_ON_TARGET)
            ? g
            : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      expect(status.partitions.map((p) => p.sourceOffset)).toEqual([40, 40]);
      expect(await target.describeGroup(group)).toMatchObject({ groupType: 'consumer', memberCount: 1 });
      const blocked = await cutover(b.configFile, group, '1s');
      const codes = blocked.out.blocks.map((block) => block.code);
      expect(codes.filter((code) => code === 'ACTIVE_ON_TARGET')).toHaveLength(PARTITIONS);
      expect(codes).not.toContain('ACTIVE_ON_SOURCE');
      expect(await targetOffsets()).toEqual([
        [0, 20],
        [1, 20],
      ]);

      // Once the application left the target, a newer source commit is applied again.
      expect((await app.stop()).ok).toBe(true);
      let next = 50;
      await waitFor(
        'a newer source commit applied after the application left',
        async () => {
          const offsets = await targetOffsets();
          if (offsets.every(([, o]) => o !== undefined && o >= 50)) return true;
          next += 1;
          await commitOnSource(next);
          return undefined;
        },
        { timeoutMs: 60_000, intervalMs: 1_000 },
      );
    },
  );
});
