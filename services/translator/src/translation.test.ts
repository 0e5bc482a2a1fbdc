// The locator and the decision together, against an in-memory target built the way a replicator
// builds it: records of its own first, then copies of the source in order, some written twice, the
// newest not copied yet. Timestamps collide and go backwards.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AnchorStatus,
  OffsetCommitted,
  RefusalReason,
  TimestampType,
  TranslationMethod,
  TranslationOutcome,
} from '@offsetsync/contracts';
import {
  recordFingerprint,
  type FetchAnswer,
  type FetchedRecord,
  type KafkaAdapter,
  type OffsetAnswer,
  type PartitionBounds,
  type TopicPartition,
} from '@offsetsync/kafka';
import { AnchorLocator } from './anchor-locator.js';
import { decide, type Location } from './translation-plan.js';

interface SourceRecord {
  offset: number;
  timestampMs: number;
  key: Buffer;
  value: Buffer;
}

/** A target partition: records at offsets logStart.. in order. */
class MemoryTarget implements Pick<KafkaAdapter, 'partitionBounds' | 'listOffsets' | 'fetchRecords'> {
  fetches = 0;

  constructor(
    readonly records: FetchedRecord[],
    private readonly maxRecordsPerFetch: number,
    private readonly timestampType: FetchedRecord['timestampType'] = 'create-time',
  ) {}

  get highWatermark(): number {
    return this.records.length;
  }

  partitionBounds(partitions: readonly TopicPartition[]): Promise<PartitionBounds[]> {
    return Promise.resolve(partitions.map(() => ({ logStartOffset: 0, highWatermark: this.highWatermark })));
  }

  listOffsets(
    queries: ReadonlyArray<{ topic: string; partition: number; timestamp: number | 'earliest' | 'latest' }>,
  ): Promise<OffsetAnswer[]> {
    return Promise.resolve(
      queries.map((q) => {
        if (q.timestamp === 'earliest') return { ...q, offset: 0, timestamp: -1 };
        if (q.timestamp === 'latest') return { ...q, offset: this.highWatermark, timestamp: -1 };
        const t = q.timestamp;
        const hit = this.records.find((r) => r.timestampMs >= t);
        return {
          topic: q.topic,
          partition: q.partition,
          offset: hit?.offset ?? -1,
          timestamp: hit?.timestampMs ?? -1,
        };
      }),
    );
  }

  fetchRecords(
    requests: ReadonlyArray<{ topic: string; partition: number; offset: number }>,
  ): Promise<FetchAnswer[]> {
    this.fetches += 1;
    return Promise.resolve(
      requests.map((r) => {
        const records = this.records
          .filter((rec) => rec.offset >= r.offset)
          .slice(0, this.maxRecordsPerFetch)
          .map((rec) => ({ ...rec, timestampType: this.timestampType }));
        return {
          topic: r.topic,
          partition: r.partition,
          requestedOffset: r.offset,
          records,
          nextOffset: records.length === 0 ? r.offset : records[records.length - 1]!.offset + 1,
          highWatermark: this.highWatermark,
          lastStableOffset: this.highWatermark,
          logStartOffset: 0,
        };
      }),
    );
  }
}

function anchor(record: SourceRecord) {
  return {
    offset: record.offset,
    timestampMs: record.timestampMs,
    timestampType: TimestampType.TIMESTAMP_TYPE_CREATE_TIME,
    fingerprint: recordFingerprint(record.key, record.value),
    keySize: record.key.length,
    valueSize: record.value.length,
  };
}

function commitEvent(source: SourceRecord[], c: number): OffsetCommitted {
  const last = source[c - 1];
  const next = source[c];
  return OffsetCommitted.fromPartial({
    group: 'g',
    topic: 't',
    partition: 0,
    committedOffset: c,
    anchorStatus:
      next === undefined
        ? AnchorStatus.ANCHOR_STATUS_LOG_END
        : last === undefined
          ? AnchorStatus.ANCHOR_STATUS_LOG_START
          : AnchorStatus.ANCHOR_STATUS_RESOLVED,
    ...(last === undefined ? {} : { lastConsumed: anchor(last) }),
    ...(next === undefined ? {} : { nextRecord: anchor(next) }),
  });
}

async function translate(
  target: MemoryTarget,
  event: OffsetCommitted,
  options: { delta?: number; scanLimit?: number } = {},
) {
  const locator = new AnchorLocator(target, {
    probeWindow: 4,
    scanLimit: options.scanLimit ?? 10_000,
    cacheSize: 100,
  });
  const request = (role: 'next' | 'last') => {
    const a = role === 'next' ? event.nextRecord : event.lastConsumed;
    return a === undefined ? undefined : { topic: 't', partition: 0, anchor: a, role, delta: options.delta };
  };
  const nextRequest = request('next');
  const next: Location | undefined = nextRequest
    ? (await locator.locate([nextRequest])).locations[0]
    : undefined;
  const lastRequest = next?.kind === 'found' ? undefined : request('last');
  const last: Location | undefined = lastRequest
    ? (await locator.locate([lastRequest])).locations[0]
    : undefined;
  return decide(event, next, last, { logStartOffset: 0, highWatermark: target.highWatermark });
}

const scenario = fc
  .record({
    // Timestamps drawn from a small range: many collide, some go backwards.
    timestamps: fc.array(fc.integer({ min: 0, max: 20 }), { minLength: 1, maxLength: 40 }),
    ownRecords: fc.nat({ max: 5 }),
    // Records the target had before replication may carry later timestamps than everything copied, so a
    // timestamp lookup lands on them, at the very start of the log.
    ownRecordsLater: fc.boolean(),
    duplicated: fc.array(fc.boolean(), { maxLength: 40 }),
    copied: fc.nat({ max: 40 }),
    c: fc.nat({ max: 40 }),
    maxRecordsPerFetch: fc.integer({ min: 1, max: 8 }),
    skewedDelta: fc.option(fc.integer({ min: -3, max: 3 }), { nil: undefined }),
  })
  .map((s) => {
    const source: SourceRecord[] = s.timestamps.map((ts, offset) => ({
      offset,
      timestampMs: 1000 + ts,
      key: Buffer.from(`k${offset}`),
      value: Buffer.from(`v${offset}`),
    }));
    const copied = Math.min(s.copied, source.length);
    const target: FetchedRecord[] = [];
    const push = (key: Buffer, value: Buffer, timestampMs: number) =>
      target.push({
        offset: target.length,
        timestampMs,
        timestampType: 'create-time',
        key,
        value,
        headers: {},
      });
    for (let i = 0; i < s.ownRecords; i++)
      push(Buffer.from(`own${i}`), Buffer.from('x'), (s.ownRecordsLater ? 10_000_000 : 1000) + i);
    const firstCopy = new Map<number, number>();
    const lastCopy = new Map<number, number>();
    for (const record of source.slice(0, copied)) {
      firstCopy.set(record.offset, target.length);
      push(record.key, record.value, record.timestampMs);
      if (s.duplicated[record.offset] === true) push(record.key, record.value, record.timestampMs);
      lastCopy.set(record.offset, target.length - 1);
    }
    return { ...s, source, copied, target, firstCopy, lastCopy, c: Math.min(s.c, source.length) };
  });

describe('translation against a replicated target', () => {
  it('is exact when the records were copied, pending when not, and never past the counterpart', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const target = new MemoryTarget(s.target, s.maxRecordsPerFetch);
        const event = commitEvent(s.source, s.c);
        const delta = s.skewedDelta === undefined ? undefined : s.ownRecords + s.skewedDelta;
        const result = await translate(target, event, { delta });
        const nextCopied = s.c < s.copied;
        const lastCopied = s.c > 0 && s.c - 1 < s.copied;
        if (nextCopied) {
          expect(result.outcome).toBe(TranslationOutcome.TRANSLATION_OUTCOME_EXACT);
          // The first copy of the next record, or, if a probe found a later duplicate of it, no later than that.
          expect(result.targetOffset).toBeGreaterThanOrEqual(s.firstCopy.get(s.c)!);
          expect(result.targetOffset).toBeLessThanOrEqual(s.lastCopy.get(s.c)!);
        } else if (lastCopied) {
          expect(result.outcome).toBe(TranslationOutcome.TRANSLATION_OUTCOME_EXACT);
          expect(result.targetOffset).toBeGreaterThan(s.firstCopy.get(s.c - 1)!);
          expect(result.targetOffset).toBeLessThanOrEqual(s.lastCopy.get(s.c - 1)! + 1);
        } else {
          // Neither anchor is on the target: wait, and above all never commit the log end.
          expect(result.outcome).toBe(TranslationOutcome.TRANSLATION_OUTCOME_PENDING);
          expect(result.targetOffset).toBe(-1);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('falls back to the first offset with a timestamp >= T when the scan window runs out, never past the counterpart', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        fc.pre(s.c < s.copied);
        const target = new MemoryTarget(s.target, 1);
        const result = await translate(target, commitEvent(s.source, s.c), { scanLimit: 1 });
        expect([
          TranslationOutcome.TRANSLATION_OUTCOME_EXACT,
          TranslationOutcome.TRANSLATION_OUTCOME_INEXACT,
        ]).toContain(result.outcome);
        // Never past the counterpart: at most its last copy (a consumer starting at a later copy of the same
        // record reads everything it should; the earlier copy is a replicator duplicate).
        expect(result.targetOffset).toBeLessThanOrEqual(s.lastCopy.get(s.c)!);
        if (result.outcome === TranslationOutcome.TRANSLATION_OUTCOME_INEXACT) {
          expect(result.targetOffset).toBeLessThanOrEqual(s.firstCopy.get(s.c)!);
          expect(result.method).toBe(TranslationMethod.TRANSLATION_METHOD_TIMESTAMP_FALLBACK);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('finds a record exactly though an early record stamped an hour ahead makes the timestamp lookup land 1,500 records early', async () => {
    const source: SourceRecord[] = Array.from({ length: 2000 }, (_, offset) => ({
      offset,
      timestampMs: offset === 3 ? 1_000_000 + 3_600_000 : 1_000_000 + offset,
      key: Buffer.from(`k${offset}`),
      value: Buffer.from(`v${offset}`),
    }));
    const records: FetchedRecord[] = source.map((r) => ({
      ...r,
      offset: r.offset + 10,
      timestampType: 'create-time',
      headers: {},
    }));
    const padded: FetchedRecord[] = [
      ...Array.from({ length: 10 }, (_, offset): FetchedRecord => ({
        offset,
        timestampMs: 1,
        timestampType: 'create-time',
        key: null,
        value: Buffer.from('x'),
        headers: {},
      })),
      ...records,
    ];
    const event = commitEvent(source, 1500);
    // The lookup lands on the early record at target offset 13; the counterpart is 1,497 records further,
    // beyond the scan limit. Bisecting on timestamps finds it, with a handful of reads.
    const bisected = new MemoryTarget(padded, 100);
    const withoutDelta = await translate(bisected, event, { scanLimit: 200 });
    expect(withoutDelta).toMatchObject({
      outcome: TranslationOutcome.TRANSLATION_OUTCOME_EXACT,
      targetOffset: 1510,
      method: TranslationMethod.TRANSLATION_METHOD_TIMESTAMP_SCAN,
    });
    expect(bisected.fetches).toBeLessThan(20);
    // With a learned delta, one read of the probe window.
    const target = new MemoryTarget(padded, 100);
    const withDelta = await translate(target, event, { delta: 10, scanLimit: 200 });
    expect(withDelta).toMatchObject({
      outcome: TranslationOutcome.TRANSLATION_OUTCOME_EXACT,
      targetOffset: 1510,
      method: TranslationMethod.TRANSLATION_METHOD_DELTA_PROBE,
    });
    expect(target.fetches).toBe(1);
  });

  it('waits for a record not replicated yet although the lookup lands on newer records at the start of the target', async () => {
    // Regression: the scan from the lookup's offset ran out of window and fell back to offset 0, which
    // would have replayed the whole partition. The scan from where timestamps place the record reached the
    // log end: the record has not arrived.
    const source: SourceRecord[] = Array.from({ length: 100 }, (_, offset) => ({
      offset,
      timestampMs: 1000 + offset,
      key: Buffer.from(`k${offset}`),
      value: Buffer.from(`v${offset}`),
    }));
    const own = Array.from({ length: 20 }, (_, offset): FetchedRecord => ({
      offset,
      timestampMs: 9_000_000,
      timestampType: 'create-time',
      key: null,
      value: Buffer.from('own'),
      headers: {},
    }));
    const copies = source
      .slice(0, 60)
      .map((r, i): FetchedRecord => ({ ...r, offset: 20 + i, timestampType: 'create-time', headers: {} }));
    const target = new MemoryTarget([...own, ...copies], 10);
    const result = await translate(target, commitEvent(source, 80), { scanLimit: 30 });
    expect(result).toMatchObject({
      outcome: TranslationOutcome.TRANSLATION_OUTCOME_PENDING,
      targetOffset: -1,
    });
  });

  it('refuses a LogAppendTime target instead of guessing', async () => {
    const source: SourceRecord[] = [0, 1, 2].map((offset) => ({
      offset,
      timestampMs: 5,
      key: Buffer.from(`k${offset}`),
      value: Buffer.from('v'),
    }));
    const records = source.map((r): FetchedRecord => ({ ...r, timestampType: 'create-time', headers: {} }));
    const result = await translate(new MemoryTarget(records, 10, 'log-append-time'), commitEvent(source, 1));
    expect(result).toMatchObject({
      outcome: TranslationOutcome.TRANSLATION_OUTCOME_REFUSED,
      refusalReason: RefusalReason.REFUSAL_REASON_LOG_APPEND_TIME_TARGET,
      targetOffset: -1,
    });
  });

  it('refuses invalid and unresolvable source commits without looking at the target', () => {
    const beyond = OffsetCommitted.fromPartial({ anchorStatus: AnchorStatus.ANCHOR_STATUS_BEYOND_LOG_END });
    expect(decide(beyond, undefined, undefined, undefined).refusalReason).toBe(
      RefusalReason.REFUSAL_REASON_INVALID_SOURCE_OFFSET,
    );
    const unresolvable = OffsetCommitted.fromPartial({
      anchorStatus: AnchorStatus.ANCHOR_STATUS_UNRESOLVABLE,
    });
    expect(decide(unresolvable, undefined, undefined, undefined).refusalReason).toBe(
      RefusalReason.REFUSAL_REASON_ANCHOR_UNRESOLVED,
    );
  });

  it('waits for a missing topic and refuses a missing partition; clamps below the target log start', () => {
    const event = OffsetCommitted.fromPartial({
      anchorStatus: AnchorStatus.ANCHOR_STATUS_RESOLVED,
      nextRecord: { offset: 5, timestampMs: 1, fingerprint: 'f' },
    });
    // An exhausted window is retried first (a replicator still catching up), then falls back.
    const exhausted = { kind: 'window-exhausted' as const, fallbackOffset: 8, detail: 'window ran out' };
    expect(
      decide(event, exhausted, undefined, undefined, { fallBack: false, exhaustedFallsBack: false }).outcome,
    ).toBe(TranslationOutcome.TRANSLATION_OUTCOME_PENDING);
    expect(
      decide(event, exhausted, undefined, undefined, { fallBack: false, exhaustedFallsBack: true })
        .targetOffset,
    ).toBe(8);
    expect(decide(event, { kind: 'topic-missing', detail: '' }, undefined, undefined).outcome).toBe(
      TranslationOutcome.TRANSLATION_OUTCOME_PENDING,
    );
    expect(decide(event, { kind: 'partition-missing', detail: '' }, undefined, undefined).refusalReason).toBe(
      RefusalReason.REFUSAL_REASON_PARTITION_MISSING,
    );
    expect(
      decide(event, { kind: 'window-exhausted', fallbackOffset: 3, detail: '' }, undefined, {
        logStartOffset: 7,
        highWatermark: 9,
      }),
    ).toMatchObject({
      outcome: TranslationOutcome.TRANSLATION_OUTCOME_INEXACT,
      method: TranslationMethod.TRANSLATION_METHOD_LOG_START_CLAMP,
      targetOffset: 7,
    });
  });
});
