// The failover scenario, end to end: a consumer group moves from the source to a target after
// collector, translator and committer synced its position, and reads the rest with nothing skipped and
// nothing replayed, judged by record identity. With several targets (fan-out) each has its own
// replicator, translator and committer and its own records before the copies, and the group moves to
// each in turn. The workload is made to trip naive translation: timestamps
// that collide and go backwards, one record stamped an hour ahead, transactions (a commit marker, an
// aborted batch), a replicator that writes runs twice and restarts from older positions (a copy of a
// consumed record read on the target counts as replayed). It runs on the plaintext bed
// (test/e2e/failover.test.ts), on the secured one (test/e2e/secured.test.ts) and on a bed with two targets
// (test/e2e/fan-out.test.ts), each through a {@link FailoverBed} that says how its clients log in.
import type { Kafka as KafkaClient } from 'kafkajs';
import type { JetStreamManager, NatsConnection } from 'nats';
import { expect, onTestFinished } from 'vitest';
import {
  ApplyOutcome,
  Names,
  OffsetApplied,
  OffsetTranslated,
  TranslationOutcome,
} from '@offsetsync/contracts';
import {
  readPartition,
  startReplicator,
  startService,
  type ReplicatorOptions,
  type ServiceProcess,
  type TestReplicator,
} from '@offsetsync/harness';
import type { KafkaAdapter } from '@offsetsync/kafka';
import { waitFor } from '../infra/wait.js';
import type { TestConfig } from './config.js';
import { lastOnSubject } from './jetstream.js';
import { connectedAdmin } from './kafka-clients.js';
import { uniqueName } from './names.js';

/** The roles the scenario runs. */
type ScenarioRole = 'collector' | 'translator' | 'committer';

/** How the scenario reaches one bed: every client it makes comes from here. */
export interface FailoverBed<Target extends string = 'target'> {
  /** The clusters the group moves to, in this order, each linked from `source` in the services' configs. */
  targets: readonly Target[];
  /** The test's own client: creates topics and writes the workload. */
  kafka(cluster: 'source' | Target): KafkaClient;
  /** The application's client: the consumer group that commits on the source and moves to a target. */
  application(cluster: 'source' | Target): KafkaClient;
  /** The project's adapter, to read the logs and a target's committed offsets. */
  adapter(cluster: 'source' | Target): KafkaAdapter;
  /** How the test replicator reaches a cluster. */
  replicatorCluster(cluster: 'source' | Target): ReplicatorOptions['source'];
  /**
   * Each service's config with `sections` in it, all on one subject prefix. The scenario sets the
   * translator's and committer's `target` per target on what this returns.
   */
  serviceConfigs(sections: Record<string, unknown>): Record<ScenarioRole, TestConfig>;
  /** A connection that may read every stream. */
  nats(): Promise<NatsConnection>;
}

/** What the application read on one target after it moved there. */
export interface FailoverMove {
  target: string;
  replayed: number;
  skipped: number;
  /** The committed offset offsetsync applied per partition on this target (before the move). */
  targetOffsets: number[];
}

/** The moves, one per target, in the order of {@link FailoverBed.targets}. */
export interface FailoverResult {
  moves: FailoverMove[];
  /** The services it ran, still running (they stop when the test finishes). */
  services: ServiceProcess[];
  /** The topic and group it moved. */
  topic: string;
  group: string;
}

const PARTITIONS = 6;
const PER_PARTITION = 8_500;

/** The size of a {@link writeHostileWorkload}. */
export interface WorkloadShape {
  partitions: number;
  /** Plain records per partition, written in two halves around the transactions. */
  perPartition: number;
}

/**
 * Creates `topic` on the cluster of `kafka` and writes the hostile workload to it: pairs of records share
 * a timestamp, every 50th record is stamped before its predecessor, one early record of partition 0 an
 * hour ahead; halfway, a committed and an aborted transaction on partitions 1 and 2 (those that exist).
 * Plain records are `id:<partition>:<i>`, committed transactional ones `txn:<partition>:<i>`.
 */
export async function writeHostileWorkload(
  kafka: KafkaClient,
  topic: string,
  { partitions, perPartition }: WorkloadShape,
): Promise<void> {
  const admin = await connectedAdmin(kafka);
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true });
  const producer = kafka.producer();
  await producer.connect();
  onTestFinished(() => producer.disconnect());
  const base = Date.now() - 20 * 60_000;
  const message = (p: number, i: number) => {
    let timestamp = base + Math.floor(i / 2) * 2;
    if (i % 50 === 49) timestamp -= 7;
    if (p === 0 && i === 5) timestamp = base + 3_600_000;
    return { key: `key-${i % 97}`, value: `id:${p}:${i}`, partition: p, timestamp: String(timestamp) };
  };
  const writePlain = async (from: number, to: number) => {
    for (let start = from; start < to; start += 1000) {
      const end = Math.min(to, start + 1000);
      await producer.sendBatch({
        topicMessages: [
          {
            topic,
            messages: Array.from({ length: partitions }, (_, p) =>
              Array.from({ length: end - start }, (_, j) => message(p, start + j)),
            ).flat(),
          },
        ],
      });
    }
  };
  await writePlain(0, perPartition / 2);
  // One committed transaction and one aborted (its records never count as data).
  const transactionPartitions = [1, 2].filter((p) => p < partitions);
  const transactional = kafka.producer({
    transactionalId: uniqueName('failover-txn'),
    idempotent: true,
    maxInFlightRequests: 1,
  });
  await transactional.connect();
  onTestFinished(() => transactional.disconnect());
  for (const [outcome, tag] of [
    ['commit', 'txn'],
    ['abort', 'aborted'],
  ] as const) {
    await waitFor(
      `a ${outcome}ted transaction`,
      async () => {
        const txn = await transactional.transaction();
        try {
          await txn.send({
            topic,
            messages: transactionPartitions.flatMap((p) =>
              Array.from({ length: 25 }, (_, i) => ({
                key: `t${i}`,
                value: `${tag}:${p}:${i}`,
                partition: p,
                timestamp: String(base + perPartition),
              })),
            ),
          });
          await (outcome === 'commit' ? txn.commit() : txn.abort());
        } catch (error: unknown) {
          await txn.abort().catch(() => undefined);
          throw error;
        }
        return true;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
  }
  await writePlain(perPartition / 2, perPartition);
}

/** The source's data as a read-committed consumer sees it, and where the group stops per partition. */
interface SourcePositions {
  sourceData: FetchedRecords[];
  committedAt: Record<number, number>;
}

type FetchedRecords = Awaited<ReturnType<typeof readPartition>>;

/** Reads the workload back from the source and picks the group's positions among its traps. */
async function sourcePositions(bed: FailoverBed<string>, topic: string): Promise<SourcePositions> {
  const source = bed.adapter('source');
  const sourceData = await Promise.all(
    Array.from({ length: PARTITIONS }, (_, p) => readPartition(source, topic, p)),
  );
  const everything = await Promise.all(
    Array.from({ length: PARTITIONS }, (_, p) =>
      readPartition(source, topic, p, { isolation: 'read_uncommitted' }),
    ),
  );
  const dataCount = sourceData.reduce((n, records) => n + records.length, 0);
  const sharing = sourceData
    .flat()
    .filter(
      (r, i, all) => all[i + 1]?.timestampMs === r.timestampMs || all[i - 1]?.timestampMs === r.timestampMs,
    ).length;
  expect(dataCount).toBeGreaterThanOrEqual(50_000);
  expect(sharing / dataCount).toBeGreaterThanOrEqual(0.3);
  const lastOf = (p: number, prefix: string) =>
    sourceData[p]!.filter((r) => r.value?.toString().startsWith(prefix)).at(-1)!.offset;
  const firstAborted = everything[2]!.find((r) => r.value?.toString().startsWith('aborted:'))!.offset;
  const committedAt: Record<number, number> = {
    0: 6_000, // far past the record stamped an hour ahead
    1: lastOf(1, 'txn:') + 1, // on the transaction's commit marker
    2: firstAborted, // at the first record of the aborted transaction
    3: 2_501, // between two records that share a timestamp
    4: 3_050, // right after a record stamped earlier than its predecessor
    5: sourceData[5]!.at(-1)!.offset + 1, // everything consumed: caught up
  };
  return { sourceData, committedAt };
}

/** Records target number `index` holds of its own in partition `p` before the copies: every target differs. */
const ownRecords = (index: number, p: number) => 37 + p + 16 * index;

/**
 * Creates the topic on `target` with records of its own, so no offset matches the source's (nor another
 * target's), and starts an at-least-once replicator to it.
 */
async function prepareTarget(bed: FailoverBed<string>, topic: string, target: string, index: number) {
  const targetKafka = bed.kafka(target);
  await (
    await connectedAdmin(targetKafka)
  ).createTopics({ topics: [{ topic, numPartitions: PARTITIONS }], waitForLeaders: true });
  const targetProducer = targetKafka.producer();
  await targetProducer.connect();
  onTestFinished(() => targetProducer.disconnect());
  await targetProducer.send({
    topic,
    messages: Array.from({ length: PARTITIONS }, (_, p) =>
      Array.from({ length: ownRecords(index, p) }, (_, i) => ({
        key: 'own',
        value: `target-only:${p}:${i}`,
        partition: p,
      })),
    ).flat(),
  });
  return startReplicator({
    source: bed.replicatorCluster('source'),
    target: bed.replicatorCluster(target),
    topic,
    maxBatchRecords: 200,
    // At-least-once: runs of 1 to 200 records written again right after them, and restarts from up to
    // 200 records back (everything from there copied again), at random positions; each target its own.
    duplicates: { probability: 0.3, seed: 11 + 7 * index, maxRunLength: 200, restartProbability: 0.05 },
  });
}

/** The group consumes on the source up to its positions and commits them. */
async function consumeOnSource(
  bed: FailoverBed<string>,
  topic: string,
  group: string,
  { sourceData, committedAt }: SourcePositions,
): Promise<void> {
  const consumer = bed.application('source').consumer({ groupId: group });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const consumedOnSource = new Set<string>();
  const done = new Set<number>();
  await new Promise<void>((resolve, reject) => {
    consumer
      .run({
        autoCommit: false,
        eachBatch: async ({ batch }) => {
          const p = batch.partition;
          if (done.has(p)) return;
          for (const m of batch.messages) {
            if (Number(m.offset) >= committedAt[p]!) break;
            consumedOnSource.add(m.value?.toString() ?? '');
          }
          const lastOffset = Number(batch.lastOffset());
          if (lastOffset + 1 >= committedAt[p]! || Number(batch.highWatermark) <= committedAt[p]!) {
            await consumer.commitOffsets([{ topic, partition: p, offset: String(committedAt[p]) }]);
            done.add(p);
            if (done.size === PARTITIONS) resolve();
          }
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();
  const expectedConsumed = new Set(
    sourceData.flatMap((records, p) =>
      records.filter((r) => r.offset < committedAt[p]!).map((r) => r.value!.toString()),
    ),
  );
  expect(consumedOnSource).toEqual(expectedConsumed);
}

/** Waits until `target`'s committer applied the group's position exactly on every partition. */
async function awaitApplied(
  jsm: JetStreamManager,
  names: Names,
  target: string,
  at: { topic: string; group: string; committedAt: Record<number, number> },
): Promise<OffsetApplied[]> {
  const { topic, group, committedAt } = at;
  const applied = await waitFor(
    `the group applied on ${target} for every partition`,
    async () => {
      const events: OffsetApplied[] = [];
      for (let p = 0; p < PARTITIONS; p++) {
        const message = await lastOnSubject(
          jsm,
          names.stream('applied'),
          names.applied('source', target, { group, topic, partition: p }),
        );
        const event = message && OffsetApplied.decode(message.data);
        if (event?.outcome !== ApplyOutcome.APPLY_OUTCOME_APPLIED || event.sourceOffset !== committedAt[p])
          return undefined;
        events.push(event);
      }
      return events;
    },
    { timeoutMs: 120_000, intervalMs: 250 },
  );
  for (let p = 0; p < PARTITIONS; p++) {
    const message = await lastOnSubject(
      jsm,
      names.stream('translated'),
      names.translated('source', target, { group, topic, partition: p }),
    );
    const translated = message && OffsetTranslated.decode(message.data);
    console.log(
      `[failover] partition ${p}: source ${committedAt[p]} -> ${target} ${applied[p]?.targetOffset} (${translated?.outcome === TranslationOutcome.TRANSLATION_OUTCOME_EXACT ? 'exact' : 'not exact'}, method ${translated?.method}) ${translated?.detail}`,
    );
  }
  return applied;
}

/**
 * The application moves to `target`: the same group reads the rest there, and each record read is judged
 * by identity (which source record it is a copy of).
 */
async function moveTo(
  bed: FailoverBed<string>,
  target: string,
  index: number,
  at: { topic: string; group: string; replicator: TestReplicator } & SourcePositions,
): Promise<{ replayed: number; skipped: number }> {
  const { topic, group, replicator, sourceData, committedAt } = at;
  const adapter = bed.adapter(target);
  const targetEnds = await adapter.partitionBounds(
    Array.from({ length: PARTITIONS }, (_, p) => ({ topic, partition: p })),
  );
  const readOnTarget: Array<{ partition: number; offset: number }> = [];
  const targetConsumer = bed.application(target).consumer({ groupId: group });
  await targetConsumer.connect();
  onTestFinished(() => targetConsumer.disconnect());
  await targetConsumer.subscribe({ topic, fromBeginning: true });
  const reachedEnd = new Set<number>();
  const committedOnTarget = await adapter.fetchCommittedOffsets(group, [topic]);
  for (const c of committedOnTarget) {
    const end = targetEnds[c.partition];
    if (end && 'highWatermark' in end && c.offset >= end.highWatermark) reachedEnd.add(c.partition);
  }
  await new Promise<void>((resolve, reject) => {
    if (reachedEnd.size === PARTITIONS) resolve();
    targetConsumer
      .run({
        autoCommit: false,
        eachBatch: ({ batch }) => {
          for (const m of batch.messages)
            readOnTarget.push({ partition: batch.partition, offset: Number(m.offset) });
          const end = targetEnds[batch.partition];
          if (end && 'highWatermark' in end && Number(batch.lastOffset()) + 1 >= end.highWatermark)
            reachedEnd.add(batch.partition);
          if (reachedEnd.size === PARTITIONS) resolve();
          return Promise.resolve();
        },
      })
      .catch(reject);
  });
  await targetConsumer.disconnect();

  const copyOf = new Map(replicator.copies().map((c) => [`${c.partition}:${c.targetOffset}`, c]));
  let replayed = 0;
  const readSourceRecords = new Set<string>();
  for (const read of readOnTarget) {
    const copy = copyOf.get(`${read.partition}:${read.offset}`);
    if (copy === undefined) {
      // Only the target's own records, all before the first copy, are no copies; reading one is a replay.
      expect(read.offset).toBeLessThan(ownRecords(index, read.partition));
      replayed += 1;
      continue;
    }
    readSourceRecords.add(`${copy.partition}:${copy.sourceOffset}`);
    // Any copy of a record the group consumed on the source is a replay, the first or a duplicate.
    if (copy.sourceOffset < committedAt[copy.partition]!) replayed += 1;
  }
  let skipped = 0;
  sourceData.forEach((records, p) => {
    for (const r of records)
      if (r.offset >= committedAt[p]! && !readSourceRecords.has(`${p}:${r.offset}`)) skipped += 1;
  });
  const dataCount = sourceData.reduce((n, records) => n + records.length, 0);
  console.log(
    `[failover] ${dataCount} records, ${readOnTarget.length} read on ${target}: replayed=${replayed} skipped=${skipped}`,
  );
  return { replayed, skipped };
}

/** Runs the scenario on `bed`; the caller asserts the result (0 replayed, 0 skipped on every move). */
export async function runFailover<Target extends string>(bed: FailoverBed<Target>): Promise<FailoverResult> {
  const { targets } = bed;
  const topic = uniqueName('failover');
  const group = uniqueName('failover-app');
  await writeHostileWorkload(bed.kafka('source'), topic, {
    partitions: PARTITIONS,
    perPartition: PER_PARTITION,
  });
  const positions = await sourcePositions(bed, topic);
  const replicators = await Promise.all(targets.map((t, i) => prepareTarget(bed, topic, t, i)));

  const configs = bed.serviceConfigs({
    collector: { cluster: 'source', groups: { include: [`^${group}$`] }, fetchMaxWaitMs: '20ms' },
    // The target's own records, stamped at the test's start, are later than every source record: each
    // timestamp lookup lands on offset 0, and the scan from there to the counterpart covers up to 10,200
    // records. The default limit (5,000) is met only when one read happens to cross it past the
    // counterpart (reads of 128 KB hold about 5,500 of these records): set it above the distance.
    translator: {
      target: targets[0],
      pendingRetryMinMs: '100ms',
      pendingRetryMaxMs: '1s',
      scanLimit: 20_000,
    },
    committer: { target: targets[0] },
  });
  const names = new Names(configs.collector.nats.subjectPrefix);
  const services = await Promise.all([
    startService('collector', configs.collector),
    ...targets.flatMap((target) => [
      startService('translator', {
        ...configs.translator,
        translator: { ...(configs.translator.translator as object), target },
      }),
      startService('committer', { ...configs.committer, committer: { target } }),
    ]),
  ]);
  // Racing the replicator is the pending scenario's subject; here every record is on the target first.
  await Promise.all(replicators.map((r) => r.waitUntilCaughtUp(120_000)));

  await consumeOnSource(bed, topic, group, positions);

  const nc = await bed.nats();
  const jsm = await nc.jetstreamManager();
  const moves: FailoverMove[] = [];
  for (const [index, target] of targets.entries()) {
    const applied = await awaitApplied(jsm, names, target, { topic, group, ...positions });
    expect(applied.every((a) => a.exact)).toBe(true);
    const { replayed, skipped } = await moveTo(bed, target, index, {
      topic,
      group,
      replicator: replicators[index]!,
      ...positions,
    });
    moves.push({ target, replayed, skipped, targetOffsets: applied.map((a) => a.targetOffset) });
  }
  return { moves, services, topic, group };
}
