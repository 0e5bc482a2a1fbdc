// Captures a corpus of REAL `__consumer_offsets` records from a real broker, for the decoder's tests.
//
//   npm run -s corpus:capture
//
// Starts a private test bed, plays a fixed set of scenarios on its source cluster (classic and KIP-848
// groups committing, transactional commits that are committed and aborted, offset and group
// deletions), reads the raw offsets topic uncommitted, keeps the records of the scenarios' groups and
// writes them with what each must decode to into test/fixtures/offsets-topic-corpus.json. The broker
// is stopped whatever happens. Names are fixed, so a re-capture changes timestamps and member ids only.
//
// `expected` is worked out here from the bytes with a parser of its own and checked against what
// each scenario did, so the corpus test is not the decoder agreeing with itself.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import kafkajs, { type Admin, type Kafka as KafkaClient } from 'kafkajs';
import { assertToolSucceeded, consoleConsumer, consumerGroupsCommand } from '../test/infra/kafka-tools.js';
import { REPO_ROOT, startTestbed, stopTestbed, type TestbedInfo } from '../test/infra/testbed.js';
import { waitFor } from '../test/infra/wait.js';

const { Kafka, logLevel } = kafkajs;

const CORPUS_FILE = join(REPO_ROOT, 'test', 'fixtures', 'offsets-topic-corpus.json');
const OFFSETS_TOPIC = '__consumer_offsets';

const TOPICS = {
  orders: { topic: 'corpus-orders', partitions: 3 },
  payments: { topic: 'corpus-payments', partitions: 2 },
  txnOutput: { topic: 'corpus-txn-output', partitions: 1 },
} as const;

/** Scenario name -> the one consumer group it uses and what it does. */
const SCENARIOS = {
  'classic-commit': {
    group: 'corpus-classic',
    description: 'kafkajs (classic protocol) consumer commits without, then with, metadata and leaves',
  },
  'consumer-protocol-commit': {
    group: 'corpus-consumer-protocol',
    description: 'Java console consumer with group.protocol=consumer (KIP-848) consumes, commits on exit',
  },
  'transactional-commit': {
    group: 'corpus-txn-committed',
    description: 'kafkajs transactional producer sendOffsets, transaction committed',
  },
  'transactional-abort': {
    group: 'corpus-txn-aborted',
    description: 'kafkajs transactional producer sendOffsets, transaction aborted',
  },
  'offset-deletion': {
    group: 'corpus-offset-deletion',
    description: 'offsets set with kafka-consumer-groups --reset-offsets, one topic then --delete-offsets',
  },
  'classic-group-deletion': {
    group: 'corpus-deleted-classic',
    description:
      'kafkajs (classic protocol) consumer commits and leaves, then kafka-consumer-groups --delete',
  },
  'consumer-group-deletion': {
    group: 'corpus-deleted-consumer',
    description: 'KIP-848 console consumer commits and leaves, then kafka-consumer-groups --delete',
  },
} as const;

type ScenarioName = keyof typeof SCENARIOS;

/** What `decodeOffsetsTopicRecord` must return for a record (the fields the corpus test compares). */
interface ExpectedDecoding {
  kind: 'offset-commit' | 'offset-deleted' | 'group-metadata' | 'group-deleted' | 'coordinator-record';
  group?: string;
  topic?: string;
  partition?: number;
  offset?: number;
  metadata?: string;
  recordType?: number;
}

interface CorpusRecord {
  scenario: ScenarioName;
  offsetsPartition: number;
  offset: number;
  /** The key's leading int16: the record type (for offset commits, the key version). */
  keyType: number;
  /** The value's leading int16; null for a tombstone. */
  valueVersion: number | null;
  keyBase64: string;
  /** Null for a tombstone. */
  valueBase64: string | null;
  /** Written by a transactional producer (the record batch's transactional flag). */
  inTransaction: boolean;
  /** Part of a transaction that the log's control marker says was aborted. */
  aborted: boolean;
  expected: ExpectedDecoding;
}

interface ControlMarker {
  offsetsPartition: number;
  offset: number;
  type: 'COMMIT' | 'ABORT';
}

interface OffsetsTopicCorpus {
  description: string;
  kafkaVersion: string;
  capturedAt: string;
  generator: string;
  scenarios: Record<ScenarioName, { group: string; description: string }>;
  /** The transaction markers that ended the scenarios' transactions (not records of any group). */
  controlMarkers: ControlMarker[];
  records: CorpusRecord[];
}

async function main(): Promise<void> {
  const log = (line: string): void => console.log(`[corpus] ${line}`);
  const bed = await startTestbed({ log });
  const stop = once(() => stopTestbed(bed));
  const onSignal = (): void => {
    void stop().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const corpus = await capture(bed, log);
    await mkdir(dirname(CORPUS_FILE), { recursive: true });
    await writeFile(CORPUS_FILE, `${JSON.stringify(corpus, null, 2)}\n`);
    log(`wrote ${corpus.records.length} records to ${CORPUS_FILE}`);
    for (const line of summary(corpus.records)) log(line);
  } finally {
    await stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

async function capture(bed: TestbedInfo, log: (line: string) => void): Promise<OffsetsTopicCorpus> {
  const bootstrap = bed.source.bootstrapServers;
  // kafkajs logs every retried error (a coordinator still loading, a transaction marker still being
  // written) at ERROR; what is not retried away is thrown and reported, so its log adds nothing.
  const kafka = new Kafka({
    clientId: 'offsetsync-corpus',
    brokers: [bootstrap],
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({
      topics: Object.values(TOPICS).map(({ topic, partitions }) => ({ topic, numPartitions: partitions })),
      waitForLeaders: true,
    });
    await produceTwoPerPartition(kafka, TOPICS.orders);
    await produceTwoPerPartition(kafka, TOPICS.payments);

    log('scenario classic-commit');
    await classicConsumeAndCommit(kafka, SCENARIOS['classic-commit'].group, { withMetadata: true });

    log('scenario consumer-protocol-commit');
    await kip848ConsumeAndCommit(bootstrap, SCENARIOS['consumer-protocol-commit'].group);

    log('scenarios transactional-commit and transactional-abort');
    await transactionalCommits(kafka);

    log('scenario offset-deletion');
    const deletionGroup = SCENARIOS['offset-deletion'].group;
    for (const { topic } of [TOPICS.orders, TOPICS.payments]) {
      assertToolSucceeded(
        await consumerGroupsCommand(bootstrap, [
          '--reset-offsets',
          '--group',
          deletionGroup,
          '--topic',
          topic,
          '--to-offset',
          '1',
          '--execute',
        ]),
      );
    }
    assertToolSucceeded(
      await consumerGroupsCommand(bootstrap, [
        '--delete-offsets',
        '--group',
        deletionGroup,
        '--topic',
        TOPICS.payments.topic,
      ]),
    );

    log('scenario classic-group-deletion');
    const classicDeleted = SCENARIOS['classic-group-deletion'].group;
    await classicConsumeAndCommit(kafka, classicDeleted, { withMetadata: false });
    assertToolSucceeded(await consumerGroupsCommand(bootstrap, ['--delete', '--group', classicDeleted]));

    log('scenario consumer-group-deletion');
    const consumerDeleted = SCENARIOS['consumer-group-deletion'].group;
    await kip848ConsumeAndCommit(bootstrap, consumerDeleted);
    assertToolSucceeded(await consumerGroupsCommand(bootstrap, ['--delete', '--group', consumerDeleted]));

    await checkCommittedOffsets(admin);
    log(`reading ${OFFSETS_TOPIC} (read_uncommitted)`);
    const { records, controlMarkers } = await readScenarioRecords(kafka, admin);
    checkRecords(records);
    return {
      description:
        `Real ${OFFSETS_TOPIC} records written by an Apache Kafka broker, captured by ` +
        'scripts/capture-offsets-corpus.ts. Only the scenario groups are kept. Aborted records are present ' +
        '(read_uncommitted) and marked: a read_committed consumer never sees them.',
      kafkaVersion: bed.kafkaVersion,
      capturedAt: new Date().toISOString(),
      generator: 'scripts/capture-offsets-corpus.ts',
      scenarios: SCENARIOS,
      controlMarkers,
      records,
    };
  } finally {
    await admin.disconnect();
  }
}

async function produceTwoPerPartition(
  kafka: KafkaClient,
  { topic, partitions }: { topic: string; partitions: number },
): Promise<void> {
  const producer = kafka.producer();
  await producer.connect();
  try {
    await producer.send({
      topic,
      messages: Array.from({ length: partitions * 2 }, (_, i) => ({
        partition: i % partitions,
        value: `${topic}-${i}`,
      })),
    });
  } finally {
    await producer.disconnect();
  }
}

/** A kafkajs group consumes all of `corpus-orders` and commits twice: offset 1, then the end. */
async function classicConsumeAndCommit(
  kafka: KafkaClient,
  group: string,
  options: { withMetadata: boolean },
): Promise<void> {
  const { topic, partitions } = TOPICS.orders;
  const consumer = kafka.consumer({ groupId: group, maxWaitTimeInMs: 100 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    let seen = 0;
    const all = new Promise<void>((resolve, reject) => {
      consumer
        .run({
          autoCommit: false,
          eachMessage: () => {
            seen += 1;
            if (seen === partitions * 2) resolve();
            return Promise.resolve();
          },
        })
        .catch(reject);
    });
    await all;
    const indices = Array.from({ length: partitions }, (_, partition) => partition);
    await consumer.commitOffsets(indices.map((partition) => ({ topic, partition, offset: '1' })));
    await consumer.commitOffsets(
      indices.map((partition) => ({
        topic,
        partition,
        offset: '2',
        ...(options.withMetadata ? { metadata: `${group} checkpoint p${partition}` } : {}),
      })),
    );
  } finally {
    await consumer.disconnect();
  }
}

async function kip848ConsumeAndCommit(bootstrap: string, group: string): Promise<void> {
  const { topic, partitions } = TOPICS.orders;
  assertToolSucceeded(
    await consoleConsumer({
      bootstrap,
      topic,
      group,
      groupProtocol: 'consumer',
      maxMessages: partitions * 2,
      timeoutMs: 30_000,
    }),
  );
}

const TXN_OFFSETS = {
  'transactional-commit': [
    { partition: 0, offset: 2 },
    { partition: 1, offset: 1 },
  ],
  'transactional-abort': [
    { partition: 0, offset: 1 },
    { partition: 2, offset: 2 },
  ],
} as const;

async function transactionalCommits(kafka: KafkaClient): Promise<void> {
  const producer = kafka.producer({
    transactionalId: 'corpus-transactional-producer',
    idempotent: true,
    maxInFlightRequests: 1,
  });
  await producer.connect();
  try {
    for (const scenario of ['transactional-commit', 'transactional-abort'] as const) {
      const transaction = await producer.transaction();
      await transaction.send({ topic: TOPICS.txnOutput.topic, messages: [{ value: scenario }] });
      await transaction.sendOffsets({
        consumerGroupId: SCENARIOS[scenario].group,
        topics: [
          {
            topic: TOPICS.orders.topic,
            partitions: TXN_OFFSETS[scenario].map(({ partition, offset }) => ({
              partition,
              offset: String(offset),
            })),
          },
        ],
      });
      if (scenario === 'transactional-commit') await transaction.commit();
      else await transaction.abort();
    }
  } finally {
    await producer.disconnect();
  }
}

/** What the scenarios left committed, as the broker reports it: the corpus must tell the same story. */
async function checkCommittedOffsets(admin: Admin): Promise<void> {
  const committed = async (group: string, topic: string): Promise<Record<number, string>> => {
    const [result] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
    return Object.fromEntries((result?.partitions ?? []).map((p) => [p.partition, p.offset]));
  };
  const orders = TOPICS.orders.topic;
  expectEqual('classic-commit offsets', await committed(SCENARIOS['classic-commit'].group, orders), {
    0: '2',
    1: '2',
    2: '2',
  });
  expectEqual(
    'consumer-protocol-commit offsets',
    await committed(SCENARIOS['consumer-protocol-commit'].group, orders),
    { 0: '2', 1: '2', 2: '2' },
  );
  expectEqual(
    'transactional-commit offsets',
    await committed(SCENARIOS['transactional-commit'].group, orders),
    { 0: '2', 1: '1', 2: '-1' },
  );
  expectEqual(
    'transactional-abort offsets',
    await committed(SCENARIOS['transactional-abort'].group, orders),
    { 0: '-1', 1: '-1', 2: '-1' },
  );
  expectEqual(
    'offset-deletion offsets (orders)',
    await committed(SCENARIOS['offset-deletion'].group, orders),
    { 0: '1', 1: '1', 2: '1' },
  );
  expectEqual(
    'offset-deletion offsets (payments, deleted)',
    await committed(SCENARIOS['offset-deletion'].group, TOPICS.payments.topic),
    { 0: '-1', 1: '-1' },
  );
}

interface RawMessage {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  isControlRecord?: boolean;
  batchContext?: { producerId: string | number; inTransaction: boolean };
}

interface Captured {
  partition: number;
  offset: number;
  key: Buffer;
  value: Buffer | null;
  group: string;
  producerId: string;
  inTransaction: boolean;
  aborted?: boolean;
}

/**
 * Reads the offsets topic from the start, uncommitted, up to the end it had once the scenarios were
 * done. kafkajs keeps control records (transaction markers) out of `batch.messages`; they are read
 * from the batch's unfiltered list, which is not typed, so its shape is checked at run time.
 */
async function readScenarioRecords(
  kafka: KafkaClient,
  admin: Admin,
): Promise<{ records: CorpusRecord[]; controlMarkers: ControlMarker[] }> {
  const ends = new Map(
    (await admin.fetchTopicOffsets(OFFSETS_TOPIC)).map((p) => [p.partition, Number(p.high)] as const),
  );
  const reached = new Map<number, number>();
  const groups = new Map<string, ScenarioName>(
    Object.entries(SCENARIOS).map(([name, { group }]) => [group, name as ScenarioName]),
  );
  const captured: Captured[] = [];
  const pending = new Map<string, Captured[]>(); // "<partition>/<producerId>" -> open transaction records
  const controlMarkers: ControlMarker[] = [];
  const markerProducers = new Set<string>();

  const consumer = kafka.consumer({
    groupId: 'corpus-raw-reader',
    readUncommitted: true,
    maxWaitTimeInMs: 100,
  });
  await consumer.connect();
  try {
    consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
      reached.set(payload.partition, Number(payload.lastOffset) + 1);
    });
    await consumer.subscribe({ topic: OFFSETS_TOPIC, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: ({ batch }) => {
        const raw = (batch as unknown as { messagesWithinOffset?: unknown }).messagesWithinOffset;
        if (!Array.isArray(raw)) throw new Error('kafkajs batch has no messagesWithinOffset list any more');
        for (const message of raw as RawMessage[]) {
          const context = message.batchContext;
          if (context === undefined || message.key === null) {
            throw new Error(`record ${batch.partition}@${message.offset} lacks a key or batch context`);
          }
          const producerId = String(context.producerId);
          const slot = `${batch.partition}/${producerId}`;
          if (message.isControlRecord === true) {
            const open = pending.get(slot) ?? [];
            if (open.length === 0 && !markerProducers.has(producerId)) continue;
            const type = controlType(message.key);
            for (const record of open) record.aborted = type === 'ABORT';
            pending.delete(slot);
            controlMarkers.push({ offsetsPartition: batch.partition, offset: Number(message.offset), type });
            continue;
          }
          const group = groupOfKey(message.key);
          if (!groups.has(group)) continue;
          const record: Captured = {
            partition: batch.partition,
            offset: Number(message.offset),
            key: message.key,
            value: message.value,
            group,
            producerId,
            inTransaction: context.inTransaction,
          };
          captured.push(record);
          if (context.inTransaction) {
            markerProducers.add(producerId);
            pending.set(slot, [...(pending.get(slot) ?? []), record]);
          }
        }
        return Promise.resolve();
      },
    });
    await waitFor(
      `the end of ${OFFSETS_TOPIC}`,
      () =>
        Promise.resolve(
          [...ends].every(([partition, end]) => end === 0 || (reached.get(partition) ?? 0) >= end)
            ? true
            : undefined,
        ),
      { timeoutMs: 60_000, intervalMs: 100 },
    );
  } finally {
    await consumer.disconnect();
  }
  const unresolved = [...pending.values()].flat();
  if (unresolved.length > 0) {
    throw new Error(`${unresolved.length} transactional records have no COMMIT/ABORT marker in the log`);
  }

  const order = Object.keys(SCENARIOS);
  const records = captured
    .map((record): CorpusRecord => {
      const scenario = groups.get(record.group) as ScenarioName;
      return {
        scenario,
        offsetsPartition: record.partition,
        offset: record.offset,
        keyType: record.key.readInt16BE(0),
        valueVersion: record.value === null ? null : record.value.readInt16BE(0),
        keyBase64: record.key.toString('base64'),
        valueBase64: record.value === null ? null : record.value.toString('base64'),
        inTransaction: record.inTransaction,
        aborted: record.aborted === true,
        expected: expectedDecoding(record.key, record.value),
      };
    })
    .sort(
      (a, b) =>
        order.indexOf(a.scenario) - order.indexOf(b.scenario) ||
        a.offsetsPartition - b.offsetsPartition ||
        a.offset - b.offset,
    );
  controlMarkers.sort((a, b) => a.offsetsPartition - b.offsetsPartition || a.offset - b.offset);
  return { records, controlMarkers };
}

/** A control record's key is int16 version, int16 type: 0 abort, 1 commit. */
function controlType(key: Buffer): 'COMMIT' | 'ABORT' {
  const type = key.readInt16BE(2);
  if (type === 0) return 'ABORT';
  if (type === 1) return 'COMMIT';
  throw new Error(`control record type ${type} is neither COMMIT nor ABORT`);
}

/** Every coordinator record key, classic or newer, starts with int16 type then the int16-length group id. */
function groupOfKey(key: Buffer): string {
  const length = key.readInt16BE(2);
  return key.toString('utf8', 4, 4 + length);
}

// Group-level record types of the newer group kinds (consumer, share, streams): their tombstone
// deletes the group.
const GROUP_LEVEL_TYPES = new Set([3, 11, 17]);

/** What the record means, read straight from the bytes (independently of the collector's decoder). */
function expectedDecoding(key: Buffer, value: Buffer | null): ExpectedDecoding {
  const type = key.readInt16BE(0);
  const group = groupOfKey(key);
  if (type === 0 || type === 1) {
    let at = 4 + Buffer.byteLength(group);
    const topicLength = key.readInt16BE(at);
    const topic = key.toString('utf8', at + 2, at + 2 + topicLength);
    at += 2 + topicLength;
    const partition = key.readInt32BE(at);
    if (value === null) return { kind: 'offset-deleted', group, topic, partition };
    return { kind: 'offset-commit', group, topic, partition, ...offsetCommitValue(value) };
  }
  if (type === 2)
    return value === null ? { kind: 'group-deleted', group } : { kind: 'group-metadata', group };
  if (value === null && GROUP_LEVEL_TYPES.has(type))
    return { kind: 'group-deleted', group, recordType: type };
  return { kind: 'coordinator-record', recordType: type };
}

function offsetCommitValue(value: Buffer): { offset: number; metadata: string } {
  const version = value.readInt16BE(0);
  const offset = Number(value.readBigInt64BE(2));
  let at = version >= 3 ? 14 : 10; // version, offset, then the leader epoch from v3
  let length: number;
  if (version >= 4) {
    // Compact string: unsigned varint of length + 1. Metadata this short fits one or two bytes.
    let lengthPlusOne = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = value.readUInt8(at++);
      lengthPlusOne += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) break;
    }
    length = lengthPlusOne - 1;
  } else {
    length = value.readInt16BE(at);
    at += 2;
  }
  return { offset, metadata: value.toString('utf8', at, at + length) };
}

/** The records must show what the scenarios did; a capture that does not is not written. */
function checkRecords(records: CorpusRecord[]): void {
  const of = (scenario: ScenarioName): CorpusRecord[] => records.filter((r) => r.scenario === scenario);
  const lastCommits = (scenario: ScenarioName): Record<number, number> => {
    const last: Record<number, number> = {};
    for (const r of of(scenario)) {
      if (r.expected.kind === 'offset-commit' && r.expected.partition !== undefined) {
        last[r.expected.partition] = r.expected.offset ?? -1;
      }
    }
    return last;
  };
  const orders = TOPICS.orders.topic;

  const classic = of('classic-commit');
  const metadata = classic
    .filter((r) => r.expected.kind === 'offset-commit')
    .map((r) => r.expected.metadata ?? '<none>')
    .sort();
  expectEqual(
    'classic-commit metadata',
    metadata,
    ['', '', '', ...[0, 1, 2].map((p) => `corpus-classic checkpoint p${p}`)].sort(),
  );
  expectTrue(
    'classic-commit has group metadata',
    classic.some((r) => r.keyType === 2),
  );

  expectEqual('consumer-protocol-commit last commits', lastCommits('consumer-protocol-commit'), {
    0: 2,
    1: 2,
    2: 2,
  });
  expectTrue(
    'consumer-protocol-commit has KIP-848 records',
    of('consumer-protocol-commit').some((r) => r.keyType >= 3 && r.keyType <= 8),
  );

  for (const scenario of ['transactional-commit', 'transactional-abort'] as const) {
    const commits = of(scenario).filter((r) => r.expected.kind === 'offset-commit');
    expectEqual(
      `${scenario} commits`,
      commits.map((r) => [r.expected.topic, r.expected.partition, r.expected.offset, r.inTransaction]).sort(),
      TXN_OFFSETS[scenario].map(({ partition, offset }) => [orders, partition, offset, true]),
    );
    expectTrue(
      `${scenario} aborted marks`,
      commits.every((r) => r.aborted === (scenario === 'transactional-abort')),
    );
  }
  expectTrue(
    'only transactional-abort records are aborted',
    records.every((r) => !r.aborted || r.scenario === 'transactional-abort'),
  );

  const deleted = of('offset-deletion').filter((r) => r.expected.kind === 'offset-deleted');
  expectEqual(
    'offset-deletion tombstones',
    deleted.map((r) => [r.expected.topic, r.expected.partition]).sort(),
    [
      [TOPICS.payments.topic, 0],
      [TOPICS.payments.topic, 1],
    ],
  );

  for (const [scenario, recordType] of [
    ['classic-group-deletion', 2],
    ['consumer-group-deletion', 3],
  ] as const) {
    const group = SCENARIOS[scenario].group;
    expectTrue(
      `${scenario} ends with a type ${recordType} group tombstone`,
      of(scenario).some(
        (r) => r.expected.kind === 'group-deleted' && r.keyType === recordType && r.expected.group === group,
      ),
    );
    expectEqual(
      `${scenario} offset tombstones`,
      of(scenario)
        .filter((r) => r.expected.kind === 'offset-deleted')
        .map((r) => r.expected.partition)
        .sort(),
      [0, 1, 2],
    );
  }
}

function expectEqual(what: string, actual: unknown, expected: unknown): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what}: expected ${e}, found ${a}`);
}

function expectTrue(what: string, condition: boolean): void {
  if (!condition) throw new Error(`${what}: not so`);
}

function summary(records: CorpusRecord[]): string[] {
  const count = (label: (r: CorpusRecord) => string): string => {
    const counts = new Map<string, number>();
    for (const r of records) counts.set(label(r), (counts.get(label(r)) ?? 0) + 1);
    return [...counts].map(([key, n]) => `${key}=${n}`).join(' ');
  };
  return [
    `by scenario: ${count((r) => r.scenario)}`,
    `by kind: ${count((r) => r.expected.kind)}`,
    `by key type: ${count((r) => String(r.keyType))}`,
    `by key type/value version: ${count((r) => `${r.keyType}/v${r.valueVersion ?? 'tombstone'}`)}`,
    `transactional: ${records.filter((r) => r.inTransaction).length}, aborted: ${records.filter((r) => r.aborted).length}`,
  ];
}

function once(action: () => Promise<unknown>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => (running ??= action().then(() => undefined));
}

main().catch((error: unknown) => {
  console.error('[corpus] capture failed:', error);
  process.exitCode = 1;
});
