// The Kafka adapter against the test bed's real brokers (Kafka 4.1).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import kafkajs, { type Kafka as KafkaClient, type Message } from 'kafkajs';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { type OffsetSyncError } from '@offsetsync/contracts';
import { KafkaAdapter, type KafkaRequestEvent } from '@offsetsync/kafka';
import { createLogger, type KafkaClusterConfig } from '@offsetsync/runtime';
import { freePort } from '../infra/free-port.js';
import { startConsoleConsumer } from '../infra/kafka-tools.js';
import { connectedAdmin, kafkaClient } from '../support/kafka-clients.js';
import { uniqueName } from '../support/names.js';

const { CompressionTypes } = kafkajs;
const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const testbed = inject('testbed');
const logger = createLogger({ service: 'kafka-adapter-test', instanceId: 'test', level: 'silent' });

function clusterConfig(bootstrap: string, overrides: Partial<KafkaClusterConfig> = {}): KafkaClusterConfig {
  return {
    bootstrapServers: [bootstrap],
    connectionTimeoutMs: 3_000,
    requestTimeoutMs: 10_000,
    ...overrides,
  };
}

/** A connected adapter for the source cluster, disconnected when the test finishes. */
async function sourceAdapter(): Promise<KafkaAdapter> {
  const adapter = new KafkaAdapter({
    cluster: clusterConfig(testbed.source.bootstrapServers),
    clientId: 'kafka-adapter-test',
    logger,
  });
  onTestFinished(() => adapter.disconnect());
  await adapter.connect();
  return adapter;
}

/** A fresh topic on the source cluster. */
async function createTopic(kafka: KafkaClient, base: string, numPartitions = 1): Promise<string> {
  const admin = await connectedAdmin(kafka);
  const topic = uniqueName(base);
  await admin.createTopics({ topics: [{ topic, numPartitions }], waitForLeaders: true });
  return topic;
}

async function connectedProducer(kafka: KafkaClient, options: Parameters<KafkaClient['producer']>[0] = {}) {
  // Idempotent, so a retry under load cannot write a record twice and change the counts the tests expect.
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, ...options });
  await producer.connect();
  onTestFinished(() => producer.disconnect());
  return producer;
}

/** Polls `probe` until it returns something other than undefined, or fails after `timeoutMs`. */
async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function keysOf(records: readonly { key: Buffer | null }[]): (string | null)[] {
  return records.map((r) => (r.key === null ? null : r.key.toString()));
}

describe('KafkaAdapter against real brokers', () => {
  it('ListOffsets keeps -1 for a timestamp after the last record (trap: kafkajs fetchTopicOffsetsByTimestamp reports the high watermark, which would skip unreplicated records)', async () => {
    const kafka = kafkaClient(testbed.source.bootstrapServers);
    const topic = await createTopic(kafka, 'adapter-trap');
    const base = Date.now() - 60_000;
    const producer = await connectedProducer(kafka);
    await producer.send({
      topic,
      messages: [0, 1, 2].map((i) => ({ key: `k${i}`, value: `v${i}`, timestamp: String(base + i * 1000) })),
    });
    const adapter = await sourceAdapter();

    const [answer] = await adapter.listOffsets([{ topic, partition: 0, timestamp: base + 5_000 }]);
    expect(answer).toMatchObject({ topic, partition: 0, offset: -1 });
    expect(answer?.error).toBeUndefined();

    const admin = await connectedAdmin(kafka);
    const trap = await admin.fetchTopicOffsetsByTimestamp(topic, base + 5_000);
    expect(trap).toEqual([{ partition: 0, offset: '3' }]);
  });

  it('answers earliest, latest and by timestamp with the first offset whose timestamp is >= T (duplicates included)', async () => {
    const kafka = kafkaClient(testbed.source.bootstrapServers);
    const topic = await createTopic(kafka, 'adapter-timestamps');
    const t = Date.now() - 60_000;
    const producer = await connectedProducer(kafka);
    const stamps = [t, t + 10, t + 10, t + 10, t + 20];
    // Two batches, so the lookup crosses a batch boundary inside the run of equal timestamps.
    await producer.send({
      topic,
      messages: stamps.slice(0, 2).map((ts, i) => ({ value: `v${i}`, timestamp: String(ts) })),
    });
    await producer.send({
      topic,
      messages: stamps.slice(2).map((ts, i) => ({ value: `v${i + 2}`, timestamp: String(ts) })),
    });
    const adapter = await sourceAdapter();

    const queries = [
      { timestamp: 'earliest' as const, offset: 0 },
      { timestamp: 'latest' as const, offset: 5 },
      { timestamp: t - 1, offset: 0, ts: t },
      { timestamp: t, offset: 0, ts: t },
      { timestamp: t + 5, offset: 1, ts: t + 10 },
      { timestamp: t + 10, offset: 1, ts: t + 10 },
      { timestamp: t + 11, offset: 4, ts: t + 20 },
      { timestamp: t + 20, offset: 4, ts: t + 20 },
      { timestamp: t + 21, offset: -1 },
    ];
    const answers = await adapter.listOffsets(
      queries.map((q) => ({ topic, partition: 0, timestamp: q.timestamp })),
    );
    expect(answers.map((a) => a.offset)).toEqual(queries.map((q) => q.offset));
    for (const [i, q] of queries.entries()) {
      expect(answers[i]?.error).toBeUndefined();
      if (q.ts !== undefined) expect(answers[i]?.timestamp).toBe(q.ts);
    }
  });

  it('sends one ListOffsets, one Fetch and one OffsetCommit request per broker for many partitions', async () => {
    const kafka = kafkaClient(testbed.source.bootstrapServers);
    const topics = [
      await createTopic(kafka, 'adapter-batch-a', 6),
      await createTopic(kafka, 'adapter-batch-b', 6),
    ];
    const producer = await connectedProducer(kafka);
    for (const topic of topics) {
      await producer.send({
        topic,
        messages: Array.from({ length: 6 }, (_, p) => ({ value: `p${p}`, partition: p })),
      });
    }
    const admin = await connectedAdmin(kafka);
    const metadata = await admin.fetchTopicMetadata({ topics });
    const leaders = new Set(metadata.topics.flatMap((t) => t.partitions.map((p) => p.leader)));

    const adapter = await sourceAdapter();
    const partitions = topics.flatMap((topic) =>
      Array.from({ length: 6 }, (_, partition) => ({ topic, partition })),
    );
    await adapter.partitionCounts(topics); // metadata read before counting
    const events: KafkaRequestEvent[] = [];
    const stop = adapter.onRequest((event) => events.push(event));
    onTestFinished(stop);

    const offsets = await adapter.listOffsets(
      partitions.map((tp) => ({ ...tp, timestamp: 'latest' as const })),
    );
    expect(offsets.map((a) => a.offset)).toEqual(partitions.map(() => 1));
    const fetched = await adapter.fetchRecords(partitions.map((tp) => ({ ...tp, offset: 0 })));
    expect(fetched.map((a) => a.records.length)).toEqual(partitions.map(() => 1));
    const group = uniqueName('adapter-batch-group');
    const commits = await adapter.commitOffsets(
      group,
      partitions.map((tp) => ({ ...tp, offset: 1, metadata: null })),
    );
    expect(commits.filter((c) => c.error !== undefined)).toEqual([]);

    const count = (apiName: string) => events.filter((e) => e.apiName === apiName).length;
    const brokersOf = (apiName: string) =>
      new Set(events.filter((e) => e.apiName === apiName).map((e) => e.broker));
    expect(count('ListOffsets')).toBe(leaders.size);
    expect(brokersOf('ListOffsets').size).toBe(leaders.size);
    expect(count('Fetch')).toBe(leaders.size);
    expect(count('OffsetCommit')).toBe(1);
  });

  it('fetches at an exact offset in the middle of a multi-record batch, that record first', async () => {
    const kafka = kafkaClient(testbed.source.bootstrapServers);
    const topic = await createTopic(kafka, 'adapter-mid-batch');
    const producer = await connectedProducer(kafka);
    const t = Date.now() - 1_000;
    // One send to one partition: one record batch with offsets 0..4.
    await producer.send({
      topic,
      messages: [0, 1, 2, 3, 4].map((i) => ({
        key: `k${i}`,
        value: `v${i}`,
        timestamp: String(t + i),
        headers: { origin: 'test', twice: ['a', 'b'] },
      })),
    });
    const adapter = await sourceAdapter();

    const [answer] = await adapter.fetchRecords([{ topic, partition: 0, offset: 2 }]);
    expect(answer?.error).toBeUndefined();
    expect(answer?.records.map((r) => r.offset)).toEqual([2, 3, 4]);
    expect(keysOf(answer?.records ?? [])).toEqual(['k2', 'k3', 'k4']);
    const first = answer?.records[0];
    expect(first?.value?.toString()).toBe('v2');
    expect(first?.timestampMs).toBe(t + 2);
    expect(first?.timestampType).toBe('create-time');
    expect(first?.headers.origin).toEqual(Buffer.from('test'));
    expect(first?.headers.twice).toEqual([Buffer.from('a'), Buffer.from('b')]);
    expect(answer).toMatchObject({
      requestedOffset: 2,
      nextOffset: 5,
      highWatermark: 5,
      lastStableOffset: 5,
      logStartOffset: 0,
    });

    // The log start offset is reported (kafkajs decodes it under a misspelt name), and reading before it
    // is an answer with an error, not a throw.
    const admin = await connectedAdmin(kafka);
    await admin.fetchTopicMetadata({ topics: [topic] }); // deleteTopicRecords needs it loaded
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '3' }] });
    const [afterDelete, beforeStart] = await adapter.fetchRecords([
      { topic, partition: 0, offset: 3 },
      { topic, partition: 0, offset: 1 },
    ]);
    expect(afterDelete).toMatchObject({ logStartOffset: 3, highWatermark: 5 });
    expect(afterDelete?.records.map((r) => r.offset)).toEqual([3, 4]);
    expect(beforeStart?.error).toMatchObject({
      code: 'KAFKA_BROKER_ERROR',
      details: { brokerError: 'OFFSET_OUT_OF_RANGE' },
    });
    const [earliest] = await adapter.listOffsets([{ topic, partition: 0, timestamp: 'earliest' }]);
    expect(earliest?.offset).toBe(3);
  });

  it('under read_committed skips aborted transactions and never returns control records', async () => {
    const kafka = kafkaClient(testbed.source.bootstrapServers);
    const topic = await createTopic(kafka, 'adapter-txn');
    const producer = await connectedProducer(kafka, {
      transactionalId: uniqueName('adapter-txn-producer'),
      idempotent: true,
      maxInFlightRequests: 1,
    });
    const send = async (messages: Message[], outcome: 'commit' | 'abort') => {
      const transaction = await producer.transaction();
      await transaction.send({ topic, messages });
      await (outcome === 'commit' ? transaction.commit() : transaction.abort());
    };
    await send(
      [{ key: 'c1' }, { key: 'c2' }].map((m) => ({ ...m, value: 'x' })),
      'commit',
    ); // 0, 1, marker 2
    await send(
      [{ key: 'a1' }, { key: 'a2' }, { key: 'a3' }].map((m) => ({ ...m, value: 'x' })),
      'abort',
    ); // 3-5, marker 6
    await send([{ key: 'c3', value: 'x' }], 'commit'); // 7, marker 8
    const plain = await connectedProducer(kafka);
    await plain.send({ topic, messages: [{ key: 'p1', value: 'x' }] }); // 9
    const adapter = await sourceAdapter();

    const [committed, fromInsideAbort, uncommitted] = await Promise.all([
      adapter.fetchRecords([{ topic, partition: 0, offset: 0 }]),
      adapter.fetchRecords([{ topic, partition: 0, offset: 4 }]),
      adapter.fetchRecords([{ topic, partition: 0, offset: 0 }], { isolation: 'read_uncommitted' }),
    ]);
    expect(committed[0]?.error).toBeUndefined();
    expect(keysOf(committed[0]?.records ?? [])).toEqual(['c1', 'c2', 'c3', 'p1']);
    expect(committed[0]?.records.map((r) => r.offset)).toEqual([0, 1, 7, 9]);
    expect(committed[0]).toMatchObject({ nextOffset: 10, highWatermark: 10, lastStableOffset: 10 });
    expect(keysOf(fromInsideAbort[0]?.records ?? [])).toEqual(['c3', 'p1']);
    expect(uncommitted[0]?.records.map((r) => r.offset)).toEqual([0, 1, 3, 4, 5, 7, 9]);
  });

  it('decodes gzip, snappy, lz4 and zstd batches produced by kafkajs to the same keys and values', async () => {
    const kafka = kafkaClient(testbed.source.bootstrapServers);
    const codecs = {
      gzip: CompressionTypes.GZIP,
      snappy: CompressionTypes.Snappy,
      lz4: CompressionTypes.LZ4,
      zstd: CompressionTypes.ZSTD,
    };
    const names = Object.keys(codecs) as (keyof typeof codecs)[];
    const topic = await createTopic(kafka, 'adapter-codecs', names.length + 1);
    const adapter = await sourceAdapter(); // registers the codecs kafkajs lacks
    const messages = Array.from({ length: 50 }, (_, i) => ({
      key: `key-${i}`,
      value: `value-${i}-${'x'.repeat(500)}`,
    }));
    const producer = await connectedProducer(kafka);
    // The broker decompresses every batch to validate it before appending, so its accepting these
    // batches shows Java reads what the codecs write.
    for (const [index, name] of names.entries()) {
      await producer.send({
        topic,
        compression: codecs[name],
        messages: messages.map((m) => ({ ...m, partition: index })),
      });
    }
    await producer.send({ topic, messages: messages.map((m) => ({ ...m, partition: names.length })) });

    const sizes = new Map<number, number>();
    for (const partition of [...names.keys(), names.length]) {
      const events: KafkaRequestEvent[] = [];
      const stop = adapter.onRequest((event) => events.push(event));
      const [answer] = await adapter.fetchRecords([{ topic, partition, offset: 0 }]);
      stop();
      expect(answer?.error).toBeUndefined();
      expect(keysOf(answer?.records ?? [])).toEqual(messages.map((m) => m.key));
      expect(answer?.records.map((r) => r.value?.toString())).toEqual(messages.map((m) => m.value));
      sizes.set(partition, events.find((e) => e.apiName === 'Fetch')?.sizeBytes ?? 0);
    }
    // The batches really were compressed: each fetch response is far smaller than the uncompressed one.
    const uncompressed = sizes.get(names.length) ?? 0;
    for (const index of names.keys()) expect(sizes.get(index)).toBeLessThan(uncompressed / 4);
  });

  it('commits like the AdminClient on an empty group, with metadata, and is refused (GROUP_ACTIVE) on a group with a live member', async () => {
    const kafka = kafkaClient(testbed.source.bootstrapServers);
    const topic = await createTopic(kafka, 'adapter-commit', 2);
    const producer = await connectedProducer(kafka);
    await producer.send({
      topic,
      messages: Array.from({ length: 10 }, (_, i) => ({ value: `v${i}`, partition: i % 2 })),
    });
    const adapter = await sourceAdapter();
    const group = uniqueName('adapter-commit-group');

    const answers = await adapter.commitOffsets(group, [
      { topic, partition: 0, offset: 3, metadata: 'offsetsync:v1' },
      { topic, partition: 1, offset: 2, metadata: null },
    ]);
    expect(answers).toEqual([
      { topic, partition: 0 },
      { topic, partition: 1 },
    ]);
    const stored = await adapter.fetchCommittedOffsets(group);
    expect(stored).toEqual([
      { topic, partition: 0, offset: 3, metadata: 'offsetsync:v1' },
      { topic, partition: 1, offset: 2, metadata: '' },
    ]);
    expect(await adapter.fetchCommittedOffsets(group, ['some-other-topic'])).toEqual([]);
    // A group that only ever had admin commits is a classic group without a protocol type.
    expect(await adapter.describeGroup(group)).toEqual({
      groupType: 'classic',
      state: 'Empty',
      protocolType: '',
      memberCount: 0,
      members: [],
    });

    // A live kafkajs consumer joins the group; it never commits (autoCommit off).
    const consumer = kafka.consumer({ groupId: group });
    await consumer.connect();
    onTestFinished(() => consumer.disconnect());
    await consumer.subscribe({ topic });
    await consumer.run({ autoCommit: false, eachMessage: () => Promise.resolve() });
    const described = await eventually('the consumer group to become stable', async () => {
      const described = await adapter.describeGroup(group);
      return described.state === 'Stable' && described.memberCount === 1 ? described : undefined;
    });
    expect(described).toMatchObject({ groupType: 'classic', protocolType: 'consumer' });
    const [member] = described.members ?? [];
    expect(member).toEqual({
      memberId: member?.memberId,
      instanceId: null,
      clientId: 'offsetsync-test',
      clientHost: member?.clientHost,
    });
    expect(member?.memberId).toMatch(/^offsetsync-test-/);
    expect(member?.clientHost).toMatch(/127\.0\.0\.1/);

    const refused = await adapter.commitOffsets(group, [
      { topic, partition: 0, offset: 5, metadata: 'offsetsync:v2' },
      { topic, partition: 1, offset: 4, metadata: 'offsetsync:v2' },
    ]);
    for (const answer of refused) {
      const error: OffsetSyncError | undefined = answer.error;
      expect(error).toMatchObject({
        code: 'GROUP_ACTIVE',
        retryable: false,
        details: { brokerError: 'UNKNOWN_MEMBER_ID', brokerCode: 25 },
      });
    }
    expect(await adapter.fetchCommittedOffsets(group, [topic])).toEqual(stored);
  });

  it('reports an unknown group as Dead, of type none', async () => {
    const adapter = await sourceAdapter();
    expect(await adapter.describeGroup(uniqueName('adapter-no-such-group'))).toEqual({
      groupType: 'none',
      state: 'Dead',
      protocolType: '',
      memberCount: 0,
      members: [],
    });
  });

  it('describes a live KIP-848 consumer-protocol group by its members (trap: DescribeGroups, as kafkajs asks it, says Dead with no members), lists it by type, and is refused (GROUP_ACTIVE) an admin commit to it', async () => {
    const kafka = kafkaClient(testbed.source.bootstrapServers);
    const topic = await createTopic(kafka, 'adapter-kip848', 2);
    const producer = await connectedProducer(kafka);
    await producer.send({
      topic,
      messages: Array.from({ length: 6 }, (_, i) => ({ value: `v${i}`, partition: i % 2 })),
    });
    const adapter = await sourceAdapter();
    const group = uniqueName('adapter-kip848-group');
    const consumer = startConsoleConsumer({
      bootstrap: testbed.source.bootstrapServers,
      topic,
      group,
      groupProtocol: 'consumer',
      extraProperties: { 'client.id': 'kip848-console', 'auto.commit.interval.ms': '200' },
    });
    onTestFinished(() => consumer.stop().then(() => undefined));
    await eventually(
      'the console consumer to read every record',
      () => Promise.resolve(consumer.values().length === 6 ? true : undefined),
      60_000,
    );

    const described = await eventually('the group to be stable with its assignment', async () => {
      const d = await adapter.describeGroup(group);
      return d.state === 'Stable' && d.members?.[0]?.assignment?.length === 2 ? d : undefined;
    });
    const [member] = described.members ?? [];
    expect(member?.memberId).toMatch(/^\S{10,}$/);
    expect(member?.clientHost).toMatch(/127\.0\.0\.1/);
    expect(described).toEqual({
      groupType: 'consumer',
      state: 'Stable',
      protocolType: 'consumer',
      memberCount: 1,
      members: [
        {
          memberId: member?.memberId,
          instanceId: null,
          clientId: 'kip848-console',
          clientHost: member?.clientHost,
          assignment: [
            { topic, partition: 0 },
            { topic, partition: 1 },
          ],
        },
      ],
    });
    // What the adapter used to rely on: DescribeGroups does not see the consumer-protocol group's members.
    const admin = await connectedAdmin(kafka);
    const { groups } = await admin.describeGroups([group]);
    expect(groups).toEqual([
      { errorCode: 0, groupId: group, state: 'Dead', protocolType: '', protocol: '', members: [] },
    ]);

    const consumerGroups = await adapter.listGroups({ types: ['consumer'] });
    expect(consumerGroups.find((g) => g.groupId === group)).toEqual({
      groupId: group,
      groupType: 'consumer',
      state: 'Stable',
      protocolType: 'consumer',
    });
    expect((await adapter.listGroups({ types: ['classic'] })).map((g) => g.groupId)).not.toContain(group);
    expect((await adapter.listGroups({ states: ['Empty'] })).map((g) => g.groupId)).not.toContain(group);

    // The committer's admin commit (generation -1, no member id) is refused while the member runs.
    const committedBefore = await eventually('the console consumer to commit', async () => {
      const c = await adapter.fetchCommittedOffsets(group, [topic]);
      return c.length === 2 && c.every((p) => p.offset === 3) ? c : undefined;
    });
    const refused = await adapter.commitOffsets(group, [
      { topic, partition: 0, offset: 1, metadata: 'offsetsync:v1' },
      { topic, partition: 1, offset: 1, metadata: 'offsetsync:v1' },
    ]);
    for (const answer of refused) {
      expect(answer.error).toMatchObject({
        code: 'GROUP_ACTIVE',
        retryable: false,
        details: { brokerError: 'UNKNOWN_MEMBER_ID', brokerCode: 25 },
      });
    }
    expect(await adapter.fetchCommittedOffsets(group, [topic])).toEqual(committedBefore);

    // Stopped, the group is still a consumer-protocol group, now without members, and accepts the commit.
    expect((await consumer.stop()).ok).toBe(true);
    expect(await adapter.describeGroup(group)).toEqual({
      groupType: 'consumer',
      state: 'Empty',
      protocolType: 'consumer',
      memberCount: 0,
      members: [],
    });
    expect(await adapter.listGroups({ types: ['consumer'], states: ['empty'] })).toContainEqual({
      groupId: group,
      groupType: 'consumer',
      state: 'Empty',
      protocolType: 'consumer',
    });
    expect(await adapter.commitOffsets(group, [{ topic, partition: 0, offset: 1, metadata: null }])).toEqual([
      { topic, partition: 0 },
    ]);
  });

  it('leaves missing topics out of partitionCounts and answers them with errors in listOffsets and fetchRecords', async () => {
    const kafka = kafkaClient(testbed.source.bootstrapServers);
    const topic = await createTopic(kafka, 'adapter-present', 3);
    const missing = uniqueName('adapter-missing');
    const adapter = await sourceAdapter();

    const counts = await adapter.partitionCounts([topic, missing]);
    expect([...counts]).toEqual([[topic, 3]]);

    const offsets = await adapter.listOffsets([
      { topic: missing, partition: 0, timestamp: 'latest' },
      { topic, partition: 1, timestamp: 'latest' },
      { topic, partition: 7, timestamp: 'latest' },
    ]);
    expect(offsets[0]).toMatchObject({
      offset: -1,
      error: {
        code: 'TOPIC_MISSING',
        retryable: false,
        details: { brokerError: 'UNKNOWN_TOPIC_OR_PARTITION' },
      },
    });
    expect(offsets[1]).toEqual({ topic, partition: 1, offset: 0, timestamp: -1 });
    expect(offsets[2]?.error).toMatchObject({ code: 'PARTITION_MISSING', retryable: false });

    const fetched = await adapter.fetchRecords([
      { topic, partition: 0, offset: 0 },
      { topic: missing, partition: 0, offset: 0 },
    ]);
    expect(fetched[0]).toMatchObject({ records: [], highWatermark: 0 });
    expect(fetched[0]?.error).toBeUndefined();
    expect(fetched[1]?.error).toMatchObject({ code: 'TOPIC_MISSING', retryable: false });

    // Malformed questions are answered with errors too, and nothing is sent for them.
    const [badPartition] = await adapter.listOffsets([{ topic, partition: -1, timestamp: 'latest' }]);
    expect(badPartition?.error).toMatchObject({ code: 'KAFKA_PROTOCOL', retryable: false });
    const [badOffset] = await adapter.commitOffsets(uniqueName('adapter-bad-commit'), [
      { topic, partition: 0, offset: -5, metadata: null },
    ]);
    expect(badOffset?.error).toMatchObject({ code: 'KAFKA_PROTOCOL', retryable: false });

    // Nothing was created by asking.
    const admin = await connectedAdmin(kafka);
    expect(await admin.listTopics()).not.toContain(missing);
  });

  it('looks leaders up again when its cached metadata is stale: a new partition is found, a deleted topic is missing', async () => {
    const kafka = kafkaClient(testbed.source.bootstrapServers);
    const grown = await createTopic(kafka, 'adapter-grown', 1);
    const deleted = await createTopic(kafka, 'adapter-deleted', 1);
    const adapter = await sourceAdapter();
    // Caches both topics' leaders.
    expect(
      await adapter.listOffsets(
        [grown, deleted].map((topic) => ({ topic, partition: 0, timestamp: 'latest' as const })),
      ),
    ).toEqual([
      { topic: grown, partition: 0, offset: 0, timestamp: -1 },
      { topic: deleted, partition: 0, offset: 0, timestamp: -1 },
    ]);

    const admin = await connectedAdmin(kafka);
    await admin.createPartitions({ topicPartitions: [{ topic: grown, count: 3 }] });
    await admin.deleteTopics({ topics: [deleted] });
    await eventually('the topic change to reach the broker', async () => {
      const metadata = await admin.fetchTopicMetadata({ topics: [grown] });
      const topics = await admin.listTopics();
      return metadata.topics[0]?.partitions.length === 3 && !topics.includes(deleted) ? true : undefined;
    });

    const events: KafkaRequestEvent[] = [];
    onTestFinished(adapter.onRequest((event) => events.push(event)));
    const answers = await adapter.listOffsets([
      { topic: grown, partition: 2, timestamp: 'latest' },
      { topic: deleted, partition: 0, timestamp: 'latest' },
    ]);
    expect(answers[0]).toEqual({ topic: grown, partition: 2, offset: 0, timestamp: -1 });
    expect(answers[1]?.error).toMatchObject({
      code: 'TOPIC_MISSING',
      retryable: false,
      details: { brokerCode: 3 },
    });
    // The unknown partition made the adapter read metadata before asking; the deleted topic was asked
    // for with stale metadata, failed, and was looked up again: no third round.
    expect(events.filter((e) => e.apiName === 'ListOffsets')).toHaveLength(1);
    expect(events.filter((e) => e.apiName === 'Metadata')).toHaveLength(2);
  });

  it('answers topic identities (Metadata v12): the id the same on every call, absent for a missing topic, new for a topic deleted and created again; a leader epoch per partition', async () => {
    const kafka = kafkaClient(testbed.source.bootstrapServers);
    const topic = await createTopic(kafka, 'adapter-topic-id', 2);
    const other = await createTopic(kafka, 'adapter-topic-id-other', 1);
    const missing = uniqueName('adapter-topic-id-missing');
    const adapter = await sourceAdapter();
    const first = await adapter.topicIdentities([topic, other, missing, topic]);
    expect([...first.keys()].sort()).toEqual([topic, other].sort());
    expect(first.get(topic)?.topicId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(first.get(topic)?.topicId).not.toBe(first.get(other)?.topicId);
    expect([...first.get(topic)!.leaderEpochs.keys()].sort()).toEqual([0, 1]);
    expect(first.get(topic)!.leaderEpochs.get(0)).toBeGreaterThanOrEqual(0);
    expect((await adapter.topicIdentities([topic])).get(topic)?.topicId).toBe(first.get(topic)?.topicId);

    const admin = await connectedAdmin(kafka);
    await admin.deleteTopics({ topics: [topic] });
    await eventually('the topic to be gone', async () =>
      (await adapter.topicIdentities([topic])).has(topic) ? undefined : true,
    );
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
    const again = await eventually('the topic to be back', async () =>
      (await adapter.topicIdentities([topic])).get(topic),
    );
    expect(again.topicId).not.toBe(first.get(topic)?.topicId);
  });

  it("reads at a named leader epoch: answered (and said so) at the leader's epoch, refused at an older or a newer one", async () => {
    const kafka = kafkaClient(testbed.source.bootstrapServers);
    const topic = await createTopic(kafka, 'adapter-leader-epoch', 1);
    const producer = await connectedProducer(kafka);
    await producer.send({ topic, messages: [{ value: 'a' }, { value: 'b' }] });
    const adapter = await sourceAdapter();
    const epoch = (await adapter.topicIdentities([topic])).get(topic)!.leaderEpochs.get(0)!;
    const read = (currentLeaderEpoch?: number) =>
      adapter.fetchRecords([
        {
          topic,
          partition: 0,
          offset: 0,
          ...(currentLeaderEpoch === undefined ? {} : { currentLeaderEpoch }),
        },
      ]);
    const [unchecked] = await read();
    expect(unchecked?.records.map((r) => r.value?.toString())).toEqual(['a', 'b']);
    expect(unchecked?.leaderEpoch).toBeUndefined();
    const [current] = await read(epoch);
    expect(current?.error).toBeUndefined();
    expect(current?.records).toHaveLength(2);
    expect(current?.leaderEpoch).toBe(epoch);
    // A newer epoch than the leader's: UNKNOWN_LEADER_EPOCH (75); an older one: FENCED_LEADER_EPOCH (74).
    const [newer] = await read(epoch + 1);
    expect(newer?.error).toMatchObject({ details: { brokerCode: 75 } });
    expect(newer?.leaderEpoch).toBeUndefined();
    if (epoch > 0) {
      const [older] = await read(epoch - 1);
      expect(older?.error).toMatchObject({ details: { brokerCode: 74 } });
    }
  });

  it('lets a process exit on its own after concurrent fetchRecords and disconnect (regression: a broker socket kafkajs forgot stayed open and `offsetsync cutover` never exited; needs `npm run build`)', async () => {
    const kafka = kafkaClient(testbed.source.bootstrapServers);
    const topic = await createTopic(kafka, 'adapter-exit', 4);
    const producer = await connectedProducer(kafka);
    await producer.send({
      topic,
      messages: Array.from({ length: 4 }, (_, p) => ({ value: `p${p}`, partition: p })),
    });
    const reads = Array.from({ length: 4 }, (_, partition) => ({ topic, partition, offset: 0 }));

    // The built package, as the CLI runs it: one adapter connected first, one not; each reads twice at
    // once, then both disconnect, and nothing else keeps the process alive.
    const script = `
      import { KafkaAdapter } from '@offsetsync/kafka';
      import { createLogger } from '@offsetsync/runtime';
      const logger = createLogger({ service: 'exit-test', instanceId: 'test', level: 'silent' });
      const options = {
        cluster: { bootstrapServers: [process.env.EXIT_TEST_BOOTSTRAP], connectionTimeoutMs: 3000, requestTimeoutMs: 10000 },
        clientId: 'kafka-adapter-exit-test',
        logger,
      };
      const reads = JSON.parse(process.env.EXIT_TEST_READS);
      const connected = new KafkaAdapter(options);
      await connected.connect();
      const fresh = new KafkaAdapter(options);
      const answers = await Promise.all([connected, connected, fresh, fresh].map((a) => a.fetchRecords(reads)));
      await Promise.all([connected.disconnect(), fresh.disconnect()]);
      console.log(JSON.stringify(answers.map((answer) => answer.map((a) => a.error?.code ?? a.records.length))));
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        EXIT_TEST_BOOTSTRAP: testbed.source.bootstrapServers,
        EXIT_TEST_READS: JSON.stringify(reads),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let stdout = '';
    let stderr = '';
    let printedAt: number | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      printedAt ??= Date.now();
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

    // The reads may take a while on a loaded machine; once printed, the process must end within seconds.
    const printed = await eventually('the child to print its answers', () =>
      Promise.resolve(printedAt ?? (child.exitCode === null ? undefined : Date.now())),
    );
    const code = await Promise.race([
      exited,
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 5_000).unref()),
    ]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(Date.now() - printed).toBeLessThan(5_000);
    expect(JSON.parse(stdout)).toEqual([0, 1, 2, 3].map(() => [1, 1, 1, 1]));
  });

  it('rejects with KAFKA_UNREACHABLE within its timeouts when no broker listens', async () => {
    const port = await freePort();
    const adapter = new KafkaAdapter({
      cluster: clusterConfig(`127.0.0.1:${port}`, { connectionTimeoutMs: 300, requestTimeoutMs: 1_000 }),
      clientId: 'kafka-adapter-test',
      logger,
    });
    onTestFinished(() => adapter.disconnect());

    const began = Date.now();
    await expect(adapter.connect()).rejects.toMatchObject({ code: 'KAFKA_UNREACHABLE', retryable: true });
    await expect(
      adapter.listOffsets([{ topic: 't', partition: 0, timestamp: 'latest' }]),
    ).rejects.toMatchObject({
      code: 'KAFKA_UNREACHABLE',
    });
    expect(Date.now() - began).toBeLessThan(10_000);
  });
});
