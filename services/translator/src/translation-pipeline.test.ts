// The translation pipeline over a batch, without servers: a locator answering from a table, a publish that
// collects what it stores and keeps the last rank per subject as the stream would, messages that record
// how they were settled, and a ProblemBoard.
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { headers } from 'nats';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import {
  AnchorStatus,
  ErrorCodes,
  Names,
  OffsetCommitted,
  OffsetDeleted,
  OffsetSyncError,
  OffsetTranslated,
  RefusalReason,
  TranslationOutcome,
  type Anchor,
} from '@offsetsync/contracts';
import type { NewestOutcome, RankedMessage } from '@offsetsync/jetstream';
import type { TopicPartition } from '@offsetsync/kafka';
import { linkFilter, ProblemBoard, type LinkFilter, type TopicNames } from '@offsetsync/runtime';
import { partitionKey, type LocateRequest } from './anchor-locator.js';
import type { Locator } from './pipeline/locate.js';
import { replacesStored, type TranslationRank } from './pipeline/publish.js';
import type { RevisionLimits } from './pipeline/revisions.js';
import { PositionMemory } from './position-memory.js';
import { TranslationPipeline, type CommittedMessage } from './translation-pipeline.js';
import type { Location } from './translation-plan.js';

const names = new Names('t');
const NOW = 1_700_000_000_000;

class FakeMessage implements CommittedMessage {
  settled: string[] = [];
  readonly headers = headers();
  readonly info: { redeliveryCount: number };
  constructor(
    readonly subject: string,
    readonly seq: number,
    readonly data: Uint8Array,
    type: string | undefined,
    deliveries = 1,
  ) {
    if (type !== undefined) this.headers.set('Offsetsync-Event', type);
    this.info = { redeliveryCount: deliveries };
  }
  ack(): void {
    this.settled.push('ack');
  }
  nak(millis?: number): void {
    this.settled.push(`nak ${millis}`);
  }
  term(): void {
    this.settled.push('term');
  }
}

const anchor = (offset: number): Anchor => ({
  offset,
  timestampMs: 1,
  timestampType: 0,
  fingerprint: `f${offset}`,
  keySize: 0,
  valueSize: 0,
});

/** An exact answer: the group resumes at the first copy of the next record, at `offset`. */
function found(offset: number, method: 'delta-probe' | 'timestamp-scan'): Location {
  return {
    kind: 'found',
    offset,
    firstCopy: offset,
    role: 'next',
    exact: true,
    detail: '',
    method,
    topicId: 'orders-id',
  };
}

function commit(partition: number, offset: number, options: { deliveries?: number; seq?: number } = {}) {
  const event = OffsetCommitted.fromPartial({
    sourceCluster: 'src',
    group: 'g',
    topic: 'orders',
    partition,
    committedOffset: offset,
    version: { offsetsPartition: 1, offsetsOffset: offset },
    anchorStatus: AnchorStatus.ANCHOR_STATUS_RESOLVED,
    nextRecord: anchor(offset),
    observedAtMs: NOW,
  });
  return new FakeMessage(
    names.committed('src', event),
    options.seq ?? offset,
    OffsetCommitted.encode(event).finish(),
    'OffsetCommitted',
    options.deliveries,
  );
}

/** Answers by anchor offset from a table; `fail` makes the next round reject. */
class TableLocator implements Locator {
  readonly asked: LocateRequest[] = [];
  readonly boundsAsked: TopicPartition[][] = [];
  fail: Error | undefined;
  /** The high watermark of every target partition. */
  highWatermark = 1000;
  constructor(readonly answers: Map<number, Location>) {}
  locate(requests: readonly LocateRequest[]) {
    if (this.fail !== undefined) return Promise.reject(this.fail);
    this.asked.push(...requests);
    return Promise.resolve({
      results: requests.map((r) => ({
        location: this.answers.get(r.next?.offset ?? -1) ?? { kind: 'not-arrived', detail: 'not yet' },
        floorFailed: false,
      })),
      bounds: new Map(
        requests.map((r) => [
          partitionKey(r.topic, r.partition),
          { logStartOffset: 0, highWatermark: this.highWatermark },
        ]),
      ),
    });
  }
  partitionBounds(partitions: readonly TopicPartition[]) {
    this.boundsAsked.push([...partitions]);
    return Promise.resolve(
      new Map(
        partitions.map((p) => [
          partitionKey(p.topic, p.partition),
          { logStartOffset: 0, highWatermark: this.highWatermark },
        ]),
      ),
    );
  }
}

function setup(
  answers = new Map<number, Location>(),
  revisions?: RevisionLimits,
  topicNames?: TopicNames,
  filter?: LinkFilter,
) {
  const time = { nowMs: NOW };
  const locator = new TableLocator(answers);
  const published: { msgId: string; event: OffsetTranslated }[] = [];
  /** The rank of the last translation stored per subject. */
  const stored = new Map<string, TranslationRank>();
  const problems = new ProblemBoard(() => NOW);
  const counts: string[] = [];
  /** The messages of the pipeline's warnings and errors. */
  const warnings: string[] = [];
  let publishFailure: Error | undefined;
  const pipeline = new TranslationPipeline({
    names,
    source: 'src',
    target: 'dst',
    locator,
    positions: new PositionMemory(),
    publish: (messages: RankedMessage<TranslationRank>[]) => {
      if (publishFailure !== undefined) return Promise.reject(publishFailure);
      return Promise.resolve(
        messages.map((m, seq): NewestOutcome<TranslationRank> => {
          const last = stored.get(m.subject);
          if (last !== undefined && !replacesStored(m.rank, last))
            return { kind: 'superseded', seq: 0, stored: last };
          stored.set(m.subject, m.rank);
          published.push({ msgId: m.msgId, event: OffsetTranslated.decode(m.payload) });
          return { kind: 'stored', ack: { stream: 'T_TRANSLATED', seq, duplicate: false } };
        }),
      );
    },
    pendingFallbackAfterMs: 0,
    pendingRetry: { minMs: 50, maxMs: 500 },
    ...(revisions === undefined ? {} : { revisions }),
    topicNames,
    filter,
    tracer: new BasicTracerProvider().getTracer('test'),
    logger: pino(
      { level: 'warn' },
      { write: (line: string) => warnings.push((JSON.parse(line) as { msg: string }).msg) },
    ),
    record: (outcome) => counts.push(outcome),
    problems,
    clock: () => time.nowMs,
  });
  const failPublish = (error: Error | undefined) => (publishFailure = error);
  return { pipeline, locator, published, stored, problems, counts, warnings, failPublish, time };
}

const codes = (problems: ProblemBoard) => problems.list().map((p) => p.code);

describe('TranslationPipeline revisions', () => {
  const WATCH: RevisionLimits = { windowMs: 60_000, intervalMs: 1_000, maxWatched: 10 };
  const openEnded = (offset: number): Location => ({
    ...(found(offset, 'timestamp-scan') as Extract<Location, { kind: 'found' }>),
    openEnded: true,
  });

  it('revises a translation forward when the target grew and the answer moved later, until a window settles it', async () => {
    const answers = new Map([[12, openEnded(19)]]);
    const { pipeline, locator, published, counts, time } = setup(answers, WATCH);
    await pipeline.handleBatch([commit(0, 12)]);
    expect(pipeline.revisions.size).toBe(1);
    // The target did not grow: not even located again.
    time.nowMs += 1_000;
    await pipeline.revise();
    expect(locator.asked).toHaveLength(1);
    // It grew, and a copy of the last consumed record followed: revision 1, later; not before the
    // interval has passed.
    locator.highWatermark = 1010;
    answers.set(12, openEnded(25));
    await pipeline.revise();
    expect(locator.asked).toHaveLength(2);
    expect(published.map((p) => [p.msgId, p.event.targetOffset, p.event.revision])).toEqual([
      ['src:dst:1:12:final', 19, 0],
      ['src:dst:1:12:revised-1', 25, 1],
    ]);
    // It grew again: looked at once the interval passed since the last look, and the window settled at
    // the same offset: nothing published, no longer watched.
    locator.highWatermark = 1020;
    answers.set(12, found(25, 'timestamp-scan'));
    time.nowMs += 500;
    await pipeline.revise();
    expect(locator.asked).toHaveLength(2);
    time.nowMs += 500;
    await pipeline.revise();
    expect(locator.asked).toHaveLength(3);
    expect(published).toHaveLength(2);
    expect(pipeline.revisions.size).toBe(0);
    expect(counts).toEqual(['exact', 'revised']);
  });

  it('never publishes a revision that lands earlier, and stops watching once the group commits again', async () => {
    const answers = new Map([
      [12, openEnded(19)],
      [13, found(30, 'timestamp-scan')],
    ]);
    const { pipeline, locator, published, time } = setup(answers, WATCH);
    await pipeline.handleBatch([commit(0, 12)]);
    locator.highWatermark = 1010;
    answers.set(12, openEnded(18));
    time.nowMs += 1_000;
    await pipeline.revise();
    expect(published).toHaveLength(1);
    expect(pipeline.revisions.size).toBe(1);
    await pipeline.handleBatch([commit(0, 13, { seq: 2 })]);
    expect(pipeline.revisions.size).toBe(0);
    locator.highWatermark = 1020;
    answers.set(12, openEnded(40));
    time.nowMs += 60_000;
    await pipeline.revise();
    expect(published.map((p) => p.msgId)).toEqual(['src:dst:1:12:final', 'src:dst:1:13:final']);
  });

  it('watches nothing without a revision window', async () => {
    const { pipeline, locator, published, time } = setup(new Map([[12, openEnded(19)]]));
    await pipeline.handleBatch([commit(0, 12)]);
    locator.highWatermark = 1010;
    time.nowMs += 1_000;
    await pipeline.revise();
    expect(pipeline.revisions.size).toBe(0);
    expect(published).toHaveLength(1);
  });
});

describe('TranslationPipeline topic names', () => {
  it('looks for the records in the copy MirrorMaker 2 named <source>.<topic> and names it in the translation, also when revising', async () => {
    const openEnded = {
      ...(found(19, 'timestamp-scan') as Extract<Location, { kind: 'found' }>),
      openEnded: true,
    };
    const { pipeline, locator, published } = setup(
      new Map([[12, openEnded]]),
      { windowMs: 60_000, intervalMs: 0, maxWatched: 10 },
      { policy: 'mirrormaker2' },
    );
    await pipeline.handleBatch([commit(0, 12)]);
    expect(locator.asked.map((r) => r.topic)).toEqual(['src.orders']);
    expect(published.map((p) => [p.event.topic, p.event.targetTopic, p.event.targetOffset])).toEqual([
      ['orders', 'src.orders', 19],
    ]);
    locator.boundsAsked.length = 0;
    await pipeline.revise();
    expect(locator.boundsAsked.flat().map((p) => p.topic)).toEqual(['src.orders']);
  });

  it('uses the alias and separator MirrorMaker 2 was given, and the names of an explicit map', async () => {
    const mm2 = setup(new Map([[12, found(19, 'delta-probe')]]), undefined, {
      policy: 'mirrormaker2',
      sourceAlias: 'dc1',
      separator: '_',
    });
    await mm2.pipeline.handleBatch([commit(0, 12)]);
    expect(mm2.locator.asked.map((r) => r.topic)).toEqual(['dc1_orders']);
    const mapped = setup(new Map([[12, found(19, 'delta-probe')]]), undefined, {
      policy: 'map',
      map: { orders: 'orders-copy' },
    });
    await mapped.pipeline.handleBatch([commit(0, 12)]);
    expect(mapped.published.map((p) => p.event.targetTopic)).toEqual(['orders-copy']);
  });

  it('keeps targetTopic empty when the name is the same', async () => {
    const { pipeline, published } = setup(new Map([[12, found(19, 'delta-probe')]]));
    await pipeline.handleBatch([commit(0, 12)]);
    expect(published.map((p) => [p.event.topic, p.event.targetTopic])).toEqual([['orders', '']]);
  });

  it('refuses a commit for a topic the link does not replicate, without asking the target', async () => {
    const { pipeline, locator, published, counts } = setup(new Map(), undefined, {
      policy: 'map',
      map: { payments: 'payments' },
    });
    const message = commit(0, 12);
    await pipeline.handleBatch([message]);
    expect(locator.asked).toEqual([]);
    expect(published.map((p) => [p.event.outcome, p.event.refusalReason, p.event.targetTopic])).toEqual([
      [TranslationOutcome.TRANSLATION_OUTCOME_REFUSED, RefusalReason.REFUSAL_REASON_TOPIC_NOT_REPLICATED, ''],
    ]);
    expect(published[0]?.event.detail).toMatch(/does not list topic orders/);
    expect(counts).toEqual(['refused']);
    expect(message.settled).toEqual(['ack']);
  });
});

describe('TranslationPipeline link filter', () => {
  it("acknowledges and counts a commit the link's filter excludes, never translating it, and translates the rest", async () => {
    const filter = linkFilter({ groups: { include: ['.*'], exclude: ['^g$'] } });
    const { pipeline, locator, published, counts } = setup(
      new Map([[12, found(19, 'delta-probe')]]),
      undefined,
      undefined,
      filter,
    );
    const excluded = commit(0, 12);
    await pipeline.handleBatch([excluded]);
    expect(excluded.settled).toEqual(['ack']);
    expect(locator.asked).toEqual([]);
    expect(published).toEqual([]);
    expect(counts).toEqual(['excluded']);
    // The same commit on a link without the exclusion is translated.
    const open = setup(new Map([[12, found(19, 'delta-probe')]]), undefined, undefined, linkFilter({}));
    await open.pipeline.handleBatch([commit(0, 12)]);
    expect(open.counts).toEqual(['exact']);
  });
});

describe('TranslationPipeline', () => {
  it('translates only the newest commit per key, acks deletions, terminates what it cannot decode', async () => {
    const { pipeline, published, problems, counts } = setup(new Map([[12, found(19, 'timestamp-scan')]]));
    const older = commit(0, 11, { seq: 1 });
    const newer = commit(0, 12, { seq: 2 });
    const deleted = new FakeMessage(
      names.committed('src', { group: 'g', topic: 'orders', partition: 1 }),
      3,
      OffsetDeleted.encode(OffsetDeleted.fromPartial({ group: 'g' })).finish(),
      'OffsetDeleted',
    );
    const garbage = new FakeMessage(
      't.committed.src.g.x.0',
      4,
      new Uint8Array([0xff, 0xff]),
      'OffsetCommitted',
    );
    // Poison beside it: a commit without a type header, and one with a negative partition.
    const untyped = new FakeMessage(
      names.committed('src', { group: 'u', topic: 'orders', partition: 0 }),
      5,
      OffsetCommitted.encode(
        OffsetCommitted.fromPartial({
          sourceCluster: 'src',
          group: 'u',
          topic: 'orders',
          committedOffset: 3,
        }),
      ).finish(),
      undefined,
    );
    const negative = new FakeMessage(
      names.committed('src', { group: 'n', topic: 'orders', partition: 0 }),
      6,
      OffsetCommitted.encode(
        OffsetCommitted.fromPartial({
          sourceCluster: 'src',
          group: 'n',
          topic: 'orders',
          partition: -1,
          committedOffset: 3,
          version: { offsetsPartition: 1, offsetsOffset: 1 },
        }),
      ).finish(),
      'OffsetCommitted',
    );
    await pipeline.handleBatch([older, newer, deleted, garbage, untyped, negative]);

    expect(older.settled).toEqual(['ack']);
    expect(deleted.settled).toEqual(['ack']);
    expect([garbage, untyped, negative].map((m) => m.settled)).toEqual([['term'], ['term'], ['term']]);
    expect(newer.settled).toEqual(['ack']);
    expect(published).toMatchObject([
      {
        msgId: 'src:dst:1:12:final',
        event: { outcome: TranslationOutcome.TRANSLATION_OUTCOME_EXACT, targetOffset: 19, sourceOffset: 12 },
      },
    ]);
    expect(counts).toEqual(['undecodable', 'undecodable', 'malformed', 'exact']);
    expect(codes(problems)).toEqual([ErrorCodes.DECODE_ERROR]);

    await pipeline.handleBatch([commit(0, 13)]);
    expect(problems.list()).toEqual([]);
  });

  it('hands a pending translation back with backoff and counts it pending until it is translated; learns the position', async () => {
    const { pipeline, locator, published } = setup();
    const first = commit(0, 20, { deliveries: 3 });
    await pipeline.handleBatch([first]);
    expect(first.settled).toEqual(['nak 200']);
    expect(published.at(-1)).toMatchObject({
      msgId: 'src:dst:1:20:pending-3',
      event: { outcome: TranslationOutcome.TRANSLATION_OUTCOME_PENDING, targetOffset: -1, attempts: 3 },
    });
    expect(pipeline.pending.size).toBe(1);

    locator.answers.set(20, found(27, 'timestamp-scan'));
    const again = commit(0, 20, { deliveries: 4 });
    await pipeline.handleBatch([again]);
    expect(again.settled).toEqual(['ack']);
    expect(pipeline.pending.size).toBe(0);
    expect(pipeline.lastEventAtMs).toBe(NOW);

    // The next lookup of the partition starts from the learned point: source 20 was first copied at 27.
    await pipeline.handleBatch([commit(0, 21)]);
    expect(locator.asked.at(-1)).toMatchObject({
      next: { offset: 21 },
      floor: { anchor: { offset: 20 }, targetOffset: 27, topicId: 'orders-id' },
    });
  });

  it('refuses an invalid source commit without asking the target', async () => {
    const { pipeline, locator, published } = setup();
    const event = OffsetCommitted.fromPartial({
      sourceCluster: 'src',
      group: 'g',
      topic: 'orders',
      version: { offsetsPartition: 1, offsetsOffset: 5 },
      anchorStatus: AnchorStatus.ANCHOR_STATUS_BEYOND_LOG_END,
    });
    const message = new FakeMessage(
      names.committed('src', event),
      1,
      OffsetCommitted.encode(event).finish(),
      'OffsetCommitted',
    );
    await pipeline.handleBatch([message]);
    expect(locator.asked).toEqual([]);
    expect(published[0]?.event.refusalReason).toBe(RefusalReason.REFUSAL_REASON_INVALID_SOURCE_OFFSET);
    expect(message.settled).toEqual(['ack']);
  });

  it('files a target that cannot be read under its code, leaves the batch unsettled, and clears it once reads work', async () => {
    const { pipeline, locator, problems, warnings } = setup();
    locator.fail = new OffsetSyncError('no broker', { code: ErrorCodes.KAFKA_UNREACHABLE });
    const message = commit(0, 30);
    await expect(pipeline.handleBatch([message])).rejects.toThrow('no broker');
    expect(message.settled).toEqual([]);
    expect(codes(problems)).toEqual([ErrorCodes.KAFKA_UNREACHABLE]);

    // One partition that cannot be read: its translation waits, and the problem stays.
    locator.fail = undefined;
    const error = new OffsetSyncError('broker said no', { code: ErrorCodes.KAFKA_BROKER_ERROR });
    locator.answers.set(31, { kind: 'failed', detail: error.message, error });
    const unreadable = commit(0, 31);
    await pipeline.handleBatch([unreadable]);
    expect(unreadable.settled).toEqual(['nak 50']);
    expect(problems.list()).toMatchObject([
      { code: ErrorCodes.KAFKA_BROKER_ERROR, detail: 'broker said no' },
    ]);
    // Logged once: its retry is the same problem, on the heartbeat only.
    await pipeline.handleBatch([commit(0, 31, { deliveries: 2 })]);
    expect(warnings).toEqual([
      'cannot read the target around an anchor; its translations wait and are retried',
    ]);

    await pipeline.handleBatch([commit(0, 32)]);
    expect(problems.list()).toEqual([]);
  });

  it('leaves out a translation older than the one the stream holds, acknowledges it and counts it superseded, pending or not', async () => {
    const { pipeline, published, stored, counts } = setup(new Map([[50, found(55, 'delta-probe')]]));
    const newer = commit(0, 60);
    await pipeline.handleBatch([newer]); // pending: offset 60 has no answer
    expect(newer.settled).toEqual(['nak 50']);
    expect(pipeline.pending.size).toBe(1);

    // Another instance was slow with an older commit of the key: the stream keeps the newer one.
    const older = commit(0, 50);
    await pipeline.handleBatch([older]);
    expect(older.settled).toEqual(['ack']);
    expect(published.map((p) => p.msgId)).toEqual(['src:dst:1:60:pending-1']);
    expect(stored.get(names.translated('src', 'dst', { group: 'g', topic: 'orders', partition: 0 }))).toEqual(
      { version: { offsetsPartition: 1, offsetsOffset: 60 }, stage: 1, revision: 0 },
    );
    // An older pending one is done too, not handed back; the key still waits for the newer one's record.
    const olderPending = commit(0, 59, { deliveries: 2 });
    await pipeline.handleBatch([olderPending]);
    expect(olderPending.settled).toEqual(['ack']);
    expect(pipeline.pending.size).toBe(1);
    expect(counts).toEqual(['pending', 'superseded', 'superseded']);
  });

  it('files a failed publish under its code and leaves the batch unsettled', async () => {
    const { pipeline, problems, failPublish } = setup(new Map([[40, found(41, 'delta-probe')]]));
    failPublish(new OffsetSyncError('nats down', { code: ErrorCodes.NATS_UNREACHABLE }));
    const message = commit(0, 40);
    await expect(pipeline.handleBatch([message])).rejects.toThrow('nats down');
    expect(message.settled).toEqual([]);
    expect(codes(problems)).toEqual([ErrorCodes.NATS_UNREACHABLE]);

    failPublish(undefined);
    await pipeline.handleBatch([commit(0, 40)]);
    expect(problems.list()).toEqual([]);
  });
});
