// The test replicator (packages/harness/src/replicator.ts) against the test bed's two clusters: what the
// end-to-end tests rely on when they compute replayed and skipped records from its offset mapping.
import type { Kafka as KafkaClient, Message } from 'kafkajs';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { KafkaAdapter, type FetchedRecord } from '@offsetsync/kafka';
import { createLogger } from '@offsetsync/runtime';
import { readPartition, startReplicator, type TestReplicator } from '@offsetsync/harness';
import { connectedAdmin, kafkaClient } from '../support/kafka-clients.js';
import { uniqueName } from '../support/names.js';

const testbed = inject('testbed');
const logger = createLogger({ service: 'replicator-test', instanceId: 'test', level: 'silent' });
const sourceKafka = kafkaClient(testbed.source.bootstrapServers);
const targetKafka = kafkaClient(testbed.target.bootstrapServers);

async function connectedAdapter(bootstrap: string): Promise<KafkaAdapter> {
  const adapter = new KafkaAdapter({
    cluster: { bootstrapServers: [bootstrap], connectionTimeoutMs: 3_000, requestTimeoutMs: 10_000 },
    clientId: 'replicator-test',
    logger,
  });
  onTestFinished(() => adapter.disconnect());
  await adapter.connect();
  return adapter;
}

async function createTopic(kafka: KafkaClient, topic: string, numPartitions: number): Promise<void> {
  const admin = await connectedAdmin(kafka);
  await admin.createTopics({ topics: [{ topic, numPartitions }], waitForLeaders: true });
}

async function produce(kafka: KafkaClient, topic: string, messages: Message[]): Promise<void> {
  const producer = kafka.producer();
  await producer.connect();
  try {
    await producer.send({ topic, messages });
  } finally {
    await producer.disconnect();
  }
}

/** What a copy must keep of a record: everything but the offset. */
function content(record: FetchedRecord) {
  return {
    key: record.key?.toString() ?? null,
    value: record.value?.toString() ?? null,
    headers: record.headers,
    timestampMs: record.timestampMs,
    timestampType: record.timestampType,
  };
}

function keys(records: readonly FetchedRecord[]): (string | null)[] {
  return records.map((r) => r.key?.toString() ?? null);
}

/** Every target record the replicator wrote is the source record its mapping names. */
function expectMappingMatches(
  replicator: TestReplicator,
  partition: number,
  source: readonly FetchedRecord[],
  target: readonly FetchedRecord[],
): void {
  const sourceByOffset = new Map(source.map((r) => [r.offset, r]));
  const targetByOffset = new Map(target.map((r) => [r.offset, r]));
  for (const copy of replicator.copies(partition)) {
    const written = targetByOffset.get(copy.targetOffset);
    const original = sourceByOffset.get(copy.sourceOffset);
    expect(written, `target offset ${copy.targetOffset}`).toBeDefined();
    expect(content(written!)).toEqual(content(original!));
    expect(replicator.sourceOffsetOf(partition, copy.targetOffset)).toBe(copy.sourceOffset);
  }
}

describe('test replicator', () => {
  it('copies a 3-partition topic keeping keys, values, headers, timestamps and per-partition order', async () => {
    const topic = uniqueName('repl-copy');
    await createTopic(sourceKafka, topic, 3);
    const base = Date.now() - 3_600_000;
    const messages: Message[] = Array.from({ length: 30 }, (_, i) => ({
      partition: i % 3,
      key: i % 10 === 4 ? null : `k${i}`,
      value: i % 10 === 7 ? null : `v${i}`,
      // Out of order on purpose: the copy must keep each record's own timestamp.
      timestamp: String(base + ((i * 7919) % 1000)),
      headers: i % 2 === 0 ? { h: `h${i}`, multi: ['a', Buffer.from([0, 1, 2])] } : {},
    }));
    // Several sends, so the source holds several batches per partition.
    for (let i = 0; i < messages.length; i += 7) {
      await produce(sourceKafka, topic, messages.slice(i, i + 7));
    }

    const replicator = await startReplicator({
      source: testbed.source,
      target: testbed.target,
      topic,
      maxBatchRecords: 4,
    });
    await replicator.waitUntilCaughtUp(30_000);

    const [source, target] = [
      await connectedAdapter(testbed.source.bootstrapServers),
      await connectedAdapter(testbed.target.bootstrapServers),
    ];
    expect((await target.partitionCounts([topic])).get(topic)).toBe(3);
    for (const partition of [0, 1, 2]) {
      const original = await readPartition(source, topic, partition);
      const copied = await readPartition(target, topic, partition);
      expect(original).toHaveLength(10);
      expect(copied.map(content)).toEqual(original.map(content));
      expect(copied.every((r) => r.timestampType === 'create-time')).toBe(true);
      for (const [i, record] of original.entries()) {
        expect(replicator.targetOffsetsOf(partition, record.offset)).toEqual([copied[i]!.offset]);
      }
      expectMappingMatches(replicator, partition, original, copied);
    }
    expect(replicator.progress()).toEqual(
      [0, 1, 2].map((partition) => ({
        partition,
        nextOffset: 10,
        copied: 10,
        duplicates: 0,
        restarts: 0,
        held: false,
      })),
    );
  });

  it('copies only committed records: no aborted transactional records, no control records, and target offsets differ', async () => {
    const topic = uniqueName('repl-txn');
    await createTopic(sourceKafka, topic, 1);
    await createTopic(targetKafka, topic, 1);
    await produce(targetKafka, topic, [
      { key: 'pre1', value: 'x' },
      { key: 'pre2', value: 'x' },
    ]);
    const producer = sourceKafka.producer({
      transactionalId: uniqueName('repl-txn-producer'),
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();
    onTestFinished(() => producer.disconnect());
    const send = async (recordKeys: string[], outcome: 'commit' | 'abort') => {
      const transaction = await producer.transaction();
      await transaction.send({ topic, messages: recordKeys.map((key) => ({ key, value: 'x' })) });
      await (outcome === 'commit' ? transaction.commit() : transaction.abort());
    };
    await send(['c1', 'c2'], 'commit'); // 0, 1, marker 2
    await send(['a1', 'a2', 'a3'], 'abort'); // 3-5, marker 6
    await send(['c3'], 'commit'); // 7, marker 8
    await produce(sourceKafka, topic, [{ key: 'p1', value: 'x' }]); // 9

    const replicator = await startReplicator({ source: testbed.source, target: testbed.target, topic });
    await replicator.waitUntilCaughtUp(30_000);

    const target = await connectedAdapter(testbed.target.bootstrapServers);
    const copied = await readPartition(target, topic, 0);
    expect(keys(copied)).toEqual(['pre1', 'pre2', 'c1', 'c2', 'c3', 'p1']);
    expect(replicator.copies(0).map((c) => [c.sourceOffset, c.targetOffset])).toEqual([
      [0, 2],
      [1, 3],
      [7, 4],
      [9, 5],
    ]);
    expect(replicator.targetOffsetsOf(0, 4)).toEqual([]);
    expect(replicator.progress()).toEqual([
      { partition: 0, nextOffset: 10, copied: 4, duplicates: 0, restarts: 0, held: false },
    ]);
  });

  it('starts late from given offsets, holds records back with copyUntil, pauses and resumes', async () => {
    const topic = uniqueName('repl-steer');
    await createTopic(sourceKafka, topic, 2);
    const batch = (from: number, to: number): Message[] =>
      Array.from({ length: to - from }, (_, i) => [
        { partition: 0, key: `a${from + i}`, value: 'x' },
        { partition: 1, key: `b${from + i}`, value: 'x' },
      ]).flat();
    await produce(sourceKafka, topic, batch(0, 10));

    const replicator = await startReplicator({
      source: testbed.source,
      target: testbed.target,
      topic,
      from: { 0: 3 },
      copyUntil: { 0: 6, 1: 4 },
    });
    await replicator.waitUntilCaughtUp(30_000);
    expect(replicator.progress().map((p) => [p.nextOffset, p.copied, p.held])).toEqual([
      [6, 3, true],
      [4, 4, true],
    ]);
    const target = await connectedAdapter(testbed.target.bootstrapServers);
    expect(keys(await readPartition(target, topic, 0))).toEqual(['a3', 'a4', 'a5']);
    expect(keys(await readPartition(target, topic, 1))).toEqual(['b0', 'b1', 'b2', 'b3']);

    // Held back by a predicate: partition 1 stops before b7, partition 0 is not held.
    replicator.copyUntil((record) => record.key?.toString() === 'b7');
    await replicator.waitUntilCaughtUp(30_000);
    expect(replicator.progress().map((p) => [p.nextOffset, p.held])).toEqual([
      [10, false],
      [7, true],
    ]);

    await replicator.pause();
    replicator.copyAll();
    await produce(sourceKafka, topic, batch(10, 12));
    await expect(replicator.waitUntilCaughtUp(1_000)).rejects.toThrow(/not caught up.*\(paused\)/);
    expect(keys(await readPartition(target, topic, 1))).toEqual(['b0', 'b1', 'b2', 'b3', 'b4', 'b5', 'b6']);

    replicator.resume();
    await replicator.waitUntilCaughtUp(30_000);
    expect(keys(await readPartition(target, topic, 0))).toEqual(
      Array.from({ length: 9 }, (_, i) => `a${i + 3}`),
    );
    expect(keys(await readPartition(target, topic, 1))).toEqual(
      Array.from({ length: 12 }, (_, i) => `b${i}`),
    );
    expect(replicator.progress().map((p) => [p.nextOffset, p.copied, p.duplicates])).toEqual([
      [12, 9, 0],
      [12, 12, 0],
    ]);
  });

  it('writes duplicates (explicit, seeded random and rewound) and maps every copy', async () => {
    const topic = uniqueName('repl-dup');
    await createTopic(sourceKafka, topic, 2);
    await produce(
      sourceKafka,
      topic,
      Array.from({ length: 40 }, (_, i) => ({ partition: i % 2, key: `k${i}`, value: `v${i}` })),
    );

    const replicator = await startReplicator({
      source: testbed.source,
      target: testbed.target,
      topic,
      maxBatchRecords: 5,
      duplicateOffsets: { 0: [2, 3, 11] },
      duplicates: { probability: 0.5, seed: 42 },
    });
    await replicator.waitUntilCaughtUp(30_000);

    const source = await connectedAdapter(testbed.source.bootstrapServers);
    const target = await connectedAdapter(testbed.target.bootstrapServers);
    for (const partition of [0, 1]) {
      const original = await readPartition(source, topic, partition);
      const copied = await readPartition(target, topic, partition);
      const copies = replicator.copies(partition);
      expect(copied).toHaveLength(copies.length);
      expectMappingMatches(replicator, partition, original, copied);
      // Every source record was copied, first copies in source order.
      expect(copies.filter((c) => c.copy === 0).map((c) => c.sourceOffset)).toEqual(
        original.map((r) => r.offset),
      );
      const progress = replicator.progress()[partition]!;
      expect(progress).toMatchObject({ nextOffset: 20, copied: 20 });
      expect(progress.duplicates).toBe(copies.length - 20);
    }
    // Explicit duplicates sit right after their first copy.
    for (const offset of [2, 3, 11]) {
      const [first, second] = replicator.targetOffsetsOf(0, offset);
      expect(second).toBe(first! + 1);
    }
    // Seeded random duplicates: with probability 0.5 over 4 batches per partition, some were written.
    expect(replicator.progress().reduce((sum, p) => sum + p.duplicates, 0)).toBeGreaterThan(3);

    // A replicator restarting from older source offsets copies that range again.
    const before = replicator.copies(1).length;
    replicator.rewind({ 1: 15 });
    await expect
      .poll(() => replicator.copies(1).length - before, { timeout: 30_000, interval: 50 })
      .toBeGreaterThanOrEqual(5);
    await replicator.waitUntilCaughtUp(30_000);
    const rewound = replicator.copies(1).slice(before, before + 5);
    expect(rewound.map((c) => c.sourceOffset)).toEqual([15, 16, 17, 18, 19]);
    expect(rewound.every((c) => c.copy >= 1)).toBe(true);
  });

  it('writes runs of random length again right after them and restarts from older positions', async () => {
    const topic = uniqueName('repl-runs');
    await createTopic(sourceKafka, topic, 1);
    await produce(
      sourceKafka,
      topic,
      Array.from({ length: 300 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })),
    );
    const replicator = await startReplicator({
      source: testbed.source,
      target: testbed.target,
      topic,
      maxBatchRecords: 10,
      duplicates: { probability: 0.2, seed: 5, maxRunLength: 40, restartProbability: 0.1 },
    });
    await replicator.waitUntilCaughtUp(30_000);
    const copies = replicator.copies(0);
    // Every record copied, first copies in source order.
    expect(copies.filter((c) => c.copy === 0).map((c) => c.sourceOffset)).toEqual(
      Array.from({ length: 300 }, (_, i) => i),
    );
    // In target order the copies are runs of consecutive source records; each new run starts earlier than
    // where the one before ended (a run written again, or a restart), and some span several write batches.
    const runs: { from: number; to: number }[] = [];
    for (const c of copies) {
      const run = runs.at(-1);
      if (run !== undefined && c.sourceOffset === run.to + 1) run.to = c.sourceOffset;
      else runs.push({ from: c.sourceOffset, to: c.sourceOffset });
    }
    expect(runs.length).toBeGreaterThan(3);
    runs.slice(1).forEach((run, i) => expect(run.from).toBeLessThanOrEqual(runs[i]!.to));
    expect(Math.max(...runs.slice(1).map((r, i) => runs[i]!.to - r.from + 1))).toBeGreaterThan(10);
    expect(replicator.progress()[0]!.restarts).toBeGreaterThan(0);
  });

  it('gives the same duplicates for the same seed', async () => {
    const pattern = async (): Promise<[number, number][]> => {
      const topic = uniqueName('repl-seed');
      await createTopic(sourceKafka, topic, 1);
      await produce(
        sourceKafka,
        topic,
        Array.from({ length: 30 }, (_, i) => ({ key: `k${i}`, value: 'x' })),
      );
      const replicator = await startReplicator({
        source: testbed.source,
        target: testbed.target,
        topic,
        maxBatchRecords: 3,
        duplicates: { probability: 0.4, seed: 7 },
      });
      await replicator.waitUntilCaughtUp(30_000);
      return replicator.copies(0).map((c) => [c.sourceOffset, c.copy]);
    };
    const first = await pattern();
    expect(first.some(([, copy]) => copy > 0)).toBe(true);
    expect(await pattern()).toEqual(first);
  });

  it('creates a LogAppendTime target topic on request and refuses an existing one with other configs', async () => {
    const topic = uniqueName('repl-lat');
    await createTopic(sourceKafka, topic, 1);
    const createTime = Date.now() - 86_400_000;
    await produce(sourceKafka, topic, [{ key: 'k', value: 'v', timestamp: String(createTime) }]);
    const targetTopicConfigs = { 'message.timestamp.type': 'LogAppendTime' };

    const replicator = await startReplicator({
      source: testbed.source,
      target: testbed.target,
      topic,
      targetTopicConfigs,
    });
    await replicator.waitUntilCaughtUp(30_000);
    const target = await connectedAdapter(testbed.target.bootstrapServers);
    const [copied] = await readPartition(target, topic, 0);
    expect(copied).toMatchObject({ timestampType: 'log-append-time' });
    expect(copied!.timestampMs).toBeGreaterThan(createTime);

    const other = uniqueName('repl-lat-existing');
    await createTopic(sourceKafka, other, 1);
    await createTopic(targetKafka, other, 1);
    await expect(
      startReplicator({ source: testbed.source, target: testbed.target, topic: other, targetTopicConfigs }),
    ).rejects.toThrow(/exists with other configs: message.timestamp.type=CreateTime/);
  });
});
