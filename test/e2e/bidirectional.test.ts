// A -> B and B -> A at once: an application moves from A to B and back, with nothing replayed, nothing
// skipped, and no commit echoing between the clusters.
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import type { KafkaAdapter } from '@offsetsync/kafka';
import { Names, parseCommitMetadata, ServiceRole } from '@offsetsync/contracts';
import { startReplicator, startService } from '@offsetsync/harness';
import { waitFor } from '../infra/wait.js';
import { testConfig } from '../support/config.js';
import { heartbeats, natsConnection } from '../support/jetstream.js';
import { connectedAdmin, kafkaClient, testAdapter } from '../support/kafka-clients.js';
import { uniqueName } from '../support/names.js';

const testbed = inject('testbed');
const PARTITIONS = 3;
const RECORDS = 1000;

/** Consumes `count` records per partition from the group's committed position and commits after them. */
async function consumeAndCommit(
  bootstrapServers: string,
  group: string,
  topic: string,
  count: number,
): Promise<Map<number, string[]>> {
  const consumer = kafkaClient(bootstrapServers).consumer({ groupId: group });
  await consumer.connect();
  onTestFinished(() => consumer.disconnect());
  // A group without a committed position starts at the beginning (the first visit to A).
  await consumer.subscribe({ topic, fromBeginning: true });
  const read = new Map<number, string[]>();
  const done = new Set<number>();
  await new Promise<void>((resolve, reject) => {
    consumer
      .run({
        autoCommit: false,
        eachMessage: async ({ partition, message }) => {
          if (done.has(partition)) return;
          const values = read.get(partition) ?? [];
          values.push(message.value?.toString() ?? '');
          read.set(partition, values);
          if (values.length === count) {
            done.add(partition);
            await consumer.commitOffsets([{ topic, partition, offset: String(Number(message.offset) + 1) }]);
            if (done.size === PARTITIONS) resolve();
          }
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();
  return read;
}

describe('bidirectional links', () => {
  it('moves a group A -> B -> A with 0 replayed, 0 skipped and no loop', async () => {
    const topic = uniqueName('bidi');
    const group = uniqueName('bidi-app');
    const kafka = kafkaClient(testbed.source.bootstrapServers);
    await (
      await connectedAdmin(kafka)
    ).createTopics({ topics: [{ topic, numPartitions: PARTITIONS }], waitForLeaders: true });
    const producer = kafka.producer();
    await producer.connect();
    onTestFinished(() => producer.disconnect());
    const base = Date.now() - 60_000;
    await producer.send({
      topic,
      messages: Array.from({ length: PARTITIONS }, (_, p) =>
        Array.from({ length: RECORDS }, (_, i) => ({
          key: `k${i % 7}`,
          value: `id:${p}:${i}`,
          partition: p,
          timestamp: String(base + Math.floor(i / 2)),
        })),
      ).flat(),
    });
    const replicator = await startReplicator({
      source: testbed.source,
      target: testbed.target,
      topic,
      duplicates: { probability: 0.2, seed: 3 },
    });
    await replicator.waitUntilCaughtUp(60_000);

    // Cluster "source" is A, "target" is B; links both ways, each side with its own collector,
    // translator and committer.
    const base_ = testConfig(testbed, {
      links: [
        { source: 'source', target: 'target' },
        { source: 'target', target: 'source' },
      ],
    });
    const names = new Names(base_.nats.subjectPrefix);
    const groups = { include: [`^${group}$`] };
    await Promise.all([
      startService('collector', {
        ...base_,
        collector: { cluster: 'source', groups, fetchMaxWaitMs: '20ms' },
      }),
      startService('collector', {
        ...base_,
        collector: { cluster: 'target', groups, fetchMaxWaitMs: '20ms' },
      }),
      startService('translator', { ...base_, translator: { target: 'target', pendingRetryMinMs: '100ms' } }),
      startService('translator', { ...base_, translator: { target: 'source', pendingRetryMinMs: '100ms' } }),
      startService('committer', { ...base_, committer: { target: 'target' } }),
      startService('committer', { ...base_, committer: { target: 'source' } }),
    ]);
    const onA = testAdapter(testbed.source.bootstrapServers);
    const onB = testAdapter(testbed.target.bootstrapServers);
    const committed = async (adapter: KafkaAdapter) =>
      new Map((await adapter.fetchCommittedOffsets(group, [topic])).map((c) => [c.partition, c]));

    // 1. The application consumes 300 records per partition on A.
    const readOnA1 = await consumeAndCommit(testbed.source.bootstrapServers, group, topic, 300);
    // offsetsync brings the position to B: the copy of record 300 (any copy of it: duplicates are neither).
    await waitFor(
      'the group at the copies of 300 on B',
      async () => {
        const onTarget = await committed(onB);
        for (let p = 0; p < PARTITIONS; p++) {
          const c = onTarget.get(p);
          if (c === undefined || !replicator.targetOffsetsOf(p, 300).includes(c.offset)) return undefined;
        }
        return true;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );

    // 2. It moves to B and consumes 200 more per partition there.
    const readOnB = await consumeAndCommit(testbed.target.bootstrapServers, group, topic, 200);
    const bPositions = await committed(onB);

    // offsetsync brings B's position back to A: one past the record last consumed on B.
    await waitFor(
      'the group back on A after what it read on B',
      async () => {
        const onSource = await committed(onA);
        for (let p = 0; p < PARTITIONS; p++) {
          const lastRead = readOnB.get(p)!.at(-1)!;
          const expected = Number(lastRead.split(':')[2]) + 1;
          if (onSource.get(p)?.offset !== expected) return undefined;
        }
        return true;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    const aPositions = await committed(onA);
    for (const c of aPositions.values()) expect(parseCommitMetadata(c.metadata)?.mark.origin).toBe('target');

    // 3. It moves back to A and reads the rest: by identity, nothing twice and nothing missing.
    const consumer = kafkaClient(testbed.source.bootstrapServers).consumer({ groupId: group });
    await consumer.connect();
    onTestFinished(() => consumer.disconnect());
    await consumer.subscribe({ topic });
    const readOnA2 = new Map<number, string[]>();
    await new Promise<void>((resolve, reject) => {
      let finished = 0;
      consumer
        .run({
          autoCommit: false,
          eachMessage: ({ partition, message }) => {
            const values = readOnA2.get(partition) ?? [];
            values.push(message.value?.toString() ?? '');
            readOnA2.set(partition, values);
            if (Number(message.offset) === RECORDS - 1 && ++finished === PARTITIONS) resolve();
            return Promise.resolve();
          },
        })
        .catch(reject);
    });
    let replayed = 0;
    let skipped = 0;
    for (let p = 0; p < PARTITIONS; p++) {
      // Copies on B carry the same value: a duplicate the replicator wrote is read twice on B and counted once.
      const seen = [...(readOnA1.get(p) ?? []), ...new Set(readOnB.get(p) ?? [])];
      const all = [...seen, ...(readOnA2.get(p) ?? [])];
      replayed += all.length - new Set(all).size;
      for (let i = 0; i < RECORDS; i++) if (!all.includes(`id:${p}:${i}`)) skipped += 1;
    }
    expect({ replayed, skipped }).toEqual({ replayed: 0, skipped: 0 });

    // No loop: B keeps the application's own commits (nothing echoed back), and the collector on A saw
    // offsetsync's commits there and dropped them.
    const bNow = await committed(onB);
    for (const [p, c] of bPositions) expect(bNow.get(p)?.offset).toBe(c.offset);
    const nc = await natsConnection(testbed.nats.url);
    const jsm = await nc.jetstreamManager();
    const collectorOnA = await waitFor(
      'the collector on A counting the commits offsetsync made there',
      async () => {
        const beats = await heartbeats(jsm, names, ServiceRole.SERVICE_ROLE_COLLECTOR);
        return beats.find(
          (b) =>
            b.sourceClusters[0] === 'source' &&
            (b.progress?.eventsByOutcome.filtered_offsetsync_commit ?? 0) >= PARTITIONS,
        );
      },
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    expect(collectorOnA.progress?.eventsByOutcome.filtered_offsetsync_commit).toBeGreaterThanOrEqual(
      PARTITIONS,
    );
  });
});
