// The locator and the decision together, against an in-memory model target built the way at-least-once
// replicators build it: copies of the source in order, a run of 1 to 200 records written a second time
// right after its first copy or later, or everything again from an older position; identical records;
// truncation; the newest records not copied yet. Timestamps collide and go backwards. The truth is
// computed from which source record each target offset copies.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AnchorStatus,
  ErrorCodes,
  OffsetCommitted,
  OffsetSyncError,
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
  type TopicIdentity,
  type TopicPartition,
} from '@offsetsync/kafka';
import { AnchorLocator } from './anchor-locator.js';
import { locateAnchors } from './pipeline/locate.js';
import { PositionMemory } from './position-memory.js';
import { decide, type Location } from './translation-plan.js';

interface SourceRecord {
  offset: number;
  timestampMs: number;
  key: Buffer;
  value: Buffer;
}

/** A target partition: records at offsets from `logStart` on, in order (earlier ones truncated away). */
class MemoryTarget implements Pick<
  KafkaAdapter,
  'partitionBounds' | 'listOffsets' | 'fetchRecords' | 'topicIdentities'
> {
  fetches = 0;
  /** The topic's id: a test that recreates the topic gives it a new one, as Kafka does. */
  topicId = 'topic-id-0';
  /** The partition leader's epoch: a test of an unclean leader election raises it, as Kafka does. */
  leaderEpoch = 0;

  constructor(
    public records: FetchedRecord[],
    private readonly maxRecordsPerFetch: number,
    private readonly timestampType: FetchedRecord['timestampType'] = 'create-time',
    public logStart = 0,
  ) {}

  get highWatermark(): number {
    return this.records.length;
  }

  private readable(): FetchedRecord[] {
    return this.records.filter((r) => r.offset >= this.logStart);
  }

  topicIdentities(topics: readonly string[]): Promise<Map<string, TopicIdentity>> {
    const identity = { topicId: this.topicId, leaderEpochs: new Map([[0, this.leaderEpoch]]) };
    return Promise.resolve(new Map(topics.map((topic) => [topic, identity])));
  }

  partitionBounds(partitions: readonly TopicPartition[]): Promise<PartitionBounds[]> {
    return Promise.resolve(
      partitions.map(() => ({ logStartOffset: this.logStart, highWatermark: this.highWatermark })),
    );
  }

  listOffsets(
    queries: ReadonlyArray<{ topic: string; partition: number; timestamp: number | 'earliest' | 'latest' }>,
  ): Promise<OffsetAnswer[]> {
    return Promise.resolve(
      queries.map((q) => {
        if (q.timestamp === 'earliest') return { ...q, offset: this.logStart, timestamp: -1 };
        if (q.timestamp === 'latest') return { ...q, offset: this.highWatermark, timestamp: -1 };
        const t = q.timestamp;
        const hit = this.readable().find((r) => r.timestampMs >= t);
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
    requests: ReadonlyArray<{
      topic: string;
      partition: number;
      offset: number;
      currentLeaderEpoch?: number;
    }>,
  ): Promise<FetchAnswer[]> {
    this.fetches += 1;
    return Promise.resolve(
      requests.map((r): FetchAnswer => {
        if (r.currentLeaderEpoch !== undefined && r.currentLeaderEpoch !== this.leaderEpoch) {
          return {
            topic: r.topic,
            partition: r.partition,
            requestedOffset: r.offset,
            records: [],
            nextOffset: r.offset,
            highWatermark: -1,
            lastStableOffset: -1,
            logStartOffset: -1,
            error: new OffsetSyncError('FENCED_LEADER_EPOCH', { code: ErrorCodes.KAFKA_BROKER_ERROR }),
          };
        }
        const from = Math.max(r.offset, this.logStart);
        const records = this.records
          .slice(from, from + this.maxRecordsPerFetch)
          .map((rec) => ({ ...rec, timestampType: this.timestampType }));
        return {
          topic: r.topic,
          partition: r.partition,
          requestedOffset: r.offset,
          records,
          nextOffset: records.length === 0 ? from : records[records.length - 1]!.offset + 1,
          highWatermark: this.highWatermark,
          lastStableOffset: this.highWatermark,
          logStartOffset: this.logStart,
          ...(r.currentLeaderEpoch === undefined ? {} : { leaderEpoch: r.currentLeaderEpoch }),
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

/**
 * How many source records on each side of `c` are pairwise distinct (what the collector reports, computed
 * here the slow way): the n before `c` and the n from `c` on, up to `limit` and the records after `c`.
 */
function distinctAround(source: readonly SourceRecord[], c: number, limit: number): number {
  const key = (r: SourceRecord) => `${r.timestampMs}|${r.key.toString('hex')}|${r.value.toString('hex')}`;
  // Nothing comes before the model source's first record: only the records after c limit the count.
  for (let n = Math.min(limit, source.length - c); n > 0; n--) {
    const around = source.slice(Math.max(0, c - n), c + n).map(key);
    if (new Set(around).size === around.length) return n;
  }
  return 0;
}

function commitEvent(source: SourceRecord[], c: number, distinctLimit = 0): OffsetCommitted {
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
    distinctAround: distinctAround(source, c, distinctLimit),
  });
}

interface TranslateOptions {
  scanLimit?: number;
  duplicateWindow?: number;
  /** The position memory of earlier translations of the partition (learned from and used). */
  positions?: PositionMemory;
  locator?: AnchorLocator;
}

function locatorFor(target: MemoryTarget, options: TranslateOptions = {}): AnchorLocator {
  return new AnchorLocator(target, {
    probeWindow: 4,
    scanLimit: options.scanLimit ?? 10_000,
    duplicateWindow: options.duplicateWindow ?? 1_000,
    cacheSize: 100,
    recordCacheBytes: 1024 * 1024,
  });
}

/** What the pipeline does for one commit: locate from the learned point, decide, learn. */
async function translate(target: MemoryTarget, event: OffsetCommitted, options: TranslateOptions = {}) {
  const locator = options.locator ?? locatorFor(target, options);
  const positions = options.positions ?? new PositionMemory();
  const lowest = Math.min(event.lastConsumed?.offset ?? Infinity, event.nextRecord?.offset ?? Infinity);
  const [located] = await locateAnchors(locator, [
    { event, targetTopic: event.topic, floor: positions.floor('s', 't', 't', 0, lowest) },
  ]);
  if (located?.floorFailed === true) positions.forget('s', 't', 't', 0);
  const translation = decide(event, located?.location, located?.bounds, {
    fallBack: false,
    exhaustedFallsBack: true,
  });
  if (translation.learned !== undefined) positions.learn('s', 't', 't', 0, translation.learned);
  return translation;
}

/** Which source record each target offset is a copy of. */
type Provenance = readonly number[];

/**
 * The truth about resuming at `t` for a group that consumed the source records before `c`: `safe` when
 * every record it has not consumed and that can still be read has a copy at or after `t`; `exact` when
 * also no copy of a consumed record follows `t`.
 */
function judge(
  provenance: Provenance,
  logStart: number,
  c: number,
  t: number,
): { safe: boolean; exact: boolean } {
  const readable = provenance
    .map((source, offset) => ({ source, offset }))
    .filter((r) => r.offset >= logStart);
  const unconsumed = new Set(readable.filter((r) => r.source >= c).map((r) => r.source));
  const after = new Set(readable.filter((r) => r.offset >= t).map((r) => r.source));
  const safe = t >= logStart && t <= provenance.length && [...unconsumed].every((s) => after.has(s));
  const replay = readable.some((r) => r.offset >= t && r.source < c);
  return { safe, exact: safe && !replay };
}

function exactExists(provenance: Provenance, logStart: number, c: number): boolean {
  for (let t = logStart; t <= provenance.length; t++)
    if (judge(provenance, logStart, c, t).exact) return true;
  return false;
}

/** How the model replicator goes wrong while copying. */
const writeModes = fc.constantFrom('clean', 'run-after', 'run-later', 'resume-older', 'both');

const modelScenario = fc
  .record({
    length: fc.integer({ min: 1, max: 260 }),
    // Timestamps from a small range: many collide, some go backwards.
    timestampSpread: fc.integer({ min: 1, max: 400 }),
    seed: fc.integer(),
    identical: fc.boolean(),
    mode: writeModes,
    runLength: fc.oneof(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 200 })),
    runEnd: fc.nat(),
    laterBy: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 60 })),
    copied: fc.nat(),
    truncate: fc.boolean(),
    logStartAt: fc.nat(),
    maxRecordsPerFetch: fc.integer({ min: 20, max: 400 }),
    commits: fc.array(fc.nat(), { minLength: 1, maxLength: 4 }),
  })
  .map((s) => {
    let state = s.seed;
    const random = (n: number) => {
      state = (Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) | 0;
      return Math.abs(state) % n;
    };
    const source: SourceRecord[] = [];
    for (let offset = 0; offset < s.length; offset++) {
      const previous = source[offset - 1];
      // Identical records: a retried send right after, or a heartbeat with the same content and time.
      if (s.identical && previous !== undefined && random(6) === 0) {
        source.push({ ...previous, offset });
        continue;
      }
      source.push({
        offset,
        timestampMs: 1000 + random(s.timestampSpread),
        key: Buffer.from(`k${random(5)}`),
        value: Buffer.from(`v${offset}`),
      });
    }
    // The replicator: copies in order, and (by mode) writes a run a second time right after its first
    // copy, or later (a retried batch landing after newer ones), or restarts from an older position.
    const writes: number[] = [];
    const copied = Math.min(s.length, s.copied % (s.length + 1));
    const runEnd = copied === 0 ? 0 : s.runEnd % copied;
    const runStart = Math.max(0, runEnd - s.runLength + 1);
    const later = Math.min(copied - 1, runEnd + s.laterBy);
    for (let i = 0; i < copied; i++) {
      writes.push(i);
      if ((s.mode === 'run-after' || s.mode === 'both') && i === runEnd)
        for (let j = runStart; j <= runEnd; j++) writes.push(j);
      if (s.mode === 'run-later' && i === later) for (let j = runStart; j <= runEnd; j++) writes.push(j);
      if ((s.mode === 'resume-older' || s.mode === 'both') && i === later)
        for (let j = runStart; j <= i; j++) writes.push(j);
    }
    const target = copiesOf(source, writes);
    const logStart = s.truncate ? s.logStartAt % (target.length + 1) : 0;
    // Commits anywhere, and where runs written twice start and end (where translations go wrong).
    const commits = [...s.commits, runEnd + 1, runEnd, runStart + 1].map((c) => c % (s.length + 1));
    return { ...s, source, target, provenance: writes, logStart, commits };
  });

/** The target records a replicator writes for `writes` (source offsets, in write order). */
function copiesOf(source: readonly SourceRecord[], writes: readonly number[]): FetchedRecord[] {
  return writes.map((i, offset) => ({
    offset,
    timestampMs: source[i]!.timestampMs,
    timestampType: 'create-time',
    key: source[i]!.key,
    value: source[i]!.value,
    headers: {},
  }));
}

/**
 * The locator's duplicate window in the model tests: more than the model replicator's greatest distance
 * between two copies of a record (a run of 200 written again up to 60 records later).
 */
const MODEL_DUPLICATE_WINDOW = 300;

/** The collector's distinct check in the model tests: covers every comparison the model needs. */
const MODEL_DISTINCT_CHECK = 2 * MODEL_DUPLICATE_WINDOW;

type Model = typeof modelScenario extends fc.Arbitrary<infer T> ? T : never;

/** Whether the anchors of the commit at `c` can be told apart on the target (an exact answer is owed). */
function identifiable(m: Model, c: number): boolean {
  const same = (a: SourceRecord, b: SourceRecord) =>
    a.timestampMs === b.timestampMs && a.key.equals(b.key) && a.value.equals(b.value);
  const anchors = [m.source[c - 1], m.source[c]].filter((a): a is SourceRecord => a !== undefined);
  // No other source record looks like an anchor, and truncation left every copy of the anchors or none.
  const unique = anchors.every((a) => m.source.filter((r) => same(r, a)).length === 1);
  // Near a truncated log start, a copy whose first copy was removed looks like a first copy.
  const firstReadable = m.provenance.findIndex(
    (s, offset) => offset >= m.logStart && (s === c || s === c - 1),
  );
  const nearLogStart = m.logStart > 0 && firstReadable - m.logStart < MODEL_DUPLICATE_WINDOW;
  // A later copy of the last consumed record is taken for a rewrite only as far as the collector saw the
  // source records distinct: twice the distance between its first and last copy.
  const lCopies = m.provenance.flatMap((s, offset) => (s === c - 1 && offset >= m.logStart ? [offset] : []));
  const spread = lCopies.length < 2 ? 0 : lCopies[lCopies.length - 1]! - lCopies[0]!;
  const known = 2 * spread <= distinctAround(m.source, c, MODEL_DISTINCT_CHECK);
  return unique && !nearLogStart && known;
}

/** `provenance` as runs of consecutive source offsets, e.g. `0-100 0-50 101-110`. */
function runs(provenance: Provenance): string {
  const out: string[] = [];
  let start = provenance[0];
  for (let i = 1; i <= provenance.length; i++) {
    if (provenance[i] !== provenance[i - 1]! + 1) {
      out.push(start === provenance[i - 1] ? `${start}` : `${start}-${provenance[i - 1]}`);
      start = provenance[i];
    }
  }
  return out.join(' ');
}

function describeResult(
  c: number,
  result: { targetOffset: number; outcome: TranslationOutcome; detail: string },
) {
  return `c=${c} -> ${result.targetOffset} (${TranslationOutcome[result.outcome]}: ${result.detail})`;
}

describe('translation against a model target', () => {
  it('never skips a record, is exact whenever the records can be identified, and says why when it is not', async () => {
    await fc.assert(
      fc.asyncProperty(modelScenario, async (m) => {
        const target = new MemoryTarget(m.target, m.maxRecordsPerFetch, 'create-time', m.logStart);
        const positions = new PositionMemory();
        const locator = locatorFor(target, { duplicateWindow: MODEL_DUPLICATE_WINDOW });
        for (const c of m.commits) {
          const result = await translate(target, commitEvent(m.source, c, MODEL_DISTINCT_CHECK), {
            positions,
            locator,
          });
          const verdict = judge(m.provenance, m.logStart, c, result.targetOffset);
          const context = `${describeResult(c, result)} ${runs(m.provenance)} logStart=${m.logStart} window=${m.maxRecordsPerFetch}`;
          if (result.outcome === TranslationOutcome.TRANSLATION_OUTCOME_EXACT) {
            expect(verdict.exact, context).toBe(true);
          } else if (result.outcome === TranslationOutcome.TRANSLATION_OUTCOME_INEXACT) {
            expect(verdict.safe, context).toBe(true);
            expect(result.detail, context).not.toBe('');
          } else {
            expect(result.outcome, context).toBe(TranslationOutcome.TRANSLATION_OUTCOME_PENDING);
            expect(result.targetOffset).toBe(-1);
          }
          const anchorCopied = m.provenance.some((s, o) => o >= m.logStart && (s === c || s === c - 1));
          if (identifiable(m, c) && anchorCopied && exactExists(m.provenance, m.logStart, c)) {
            expect(result.outcome, context).toBe(TranslationOutcome.TRANSLATION_OUTCOME_EXACT);
          }
        }
      }),
      { numRuns: 1500 },
    );
  }, 120_000);

  it('checks learned positions and cached answers again when the target topic is truncated or recreated', async () => {
    await fc.assert(
      fc.asyncProperty(modelScenario, modelScenario, fc.boolean(), async (before, after, recreate) => {
        const source = before.source;
        const target = new MemoryTarget(before.target, before.maxRecordsPerFetch);
        const positions = new PositionMemory();
        const locator = locatorFor(target, { duplicateWindow: MODEL_DUPLICATE_WINDOW });
        for (const c of before.commits)
          await translate(target, commitEvent(source, c), { positions, locator });
        // The topic changes under the translator: truncated by DeleteRecords, or deleted and recreated and
        // copied again by a replicator that writes its own way.
        let provenance: Provenance = before.provenance;
        if (recreate) {
          provenance = after.provenance.filter((i) => i < source.length);
          target.records = copiesOf(source, provenance);
          target.logStart = 0;
          target.topicId = 'topic-id-1';
        } else {
          target.logStart = after.logStartAt % (target.records.length + 1);
        }
        for (const c of [...before.commits, ...after.commits.map((c) => c % (source.length + 1))]) {
          const result = await translate(target, commitEvent(source, c, MODEL_DISTINCT_CHECK), {
            positions,
            locator,
          });
          if (result.targetOffset < 0) continue;
          const verdict = judge(provenance, target.logStart, c, result.targetOffset);
          const context = `${describeResult(c, result)} ${runs(before.provenance)} -> ${runs(provenance)} logStart=${target.logStart}`;
          expect(verdict.safe, context).toBe(true);
          if (result.outcome === TranslationOutcome.TRANSLATION_OUTCOME_EXACT)
            expect(verdict.exact, context).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  }, 120_000);
});

describe('translation against a replicated target', () => {
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
    // The lookup lands on the early record at target offset 13; the counterpart is 1,497 records further.
    // Only a scan from there shows that no earlier copy exists: exact within the scan limit.
    const scanned = new MemoryTarget(padded, 100);
    expect(await translate(scanned, event, { scanLimit: 2_000, duplicateWindow: 50 })).toMatchObject({
      outcome: TranslationOutcome.TRANSLATION_OUTCOME_EXACT,
      targetOffset: 1510,
      method: TranslationMethod.TRANSLATION_METHOD_TIMESTAMP_SCAN,
    });
    // Beyond the scan limit: the floor, which is safe, inexact.
    const limited = new MemoryTarget(padded, 100);
    expect(await translate(limited, event, { scanLimit: 200, duplicateWindow: 50 })).toMatchObject({
      outcome: TranslationOutcome.TRANSLATION_OUTCOME_INEXACT,
      targetOffset: 13,
    });
    // From a learned point below it (an earlier exact translation): one read, no timestamp lookup.
    const positions = new PositionMemory();
    positions.learn('s', 't', 't', 0, {
      anchor: anchor(source[1490]!),
      targetOffset: 1500,
      topicId: 'topic-id-0',
    });
    const target = new MemoryTarget(padded, 100);
    expect(await translate(target, event, { scanLimit: 200, duplicateWindow: 20, positions })).toMatchObject({
      outcome: TranslationOutcome.TRANSLATION_OUTCOME_EXACT,
      targetOffset: 1510,
      method: TranslationMethod.TRANSLATION_METHOD_DELTA_PROBE,
    });
    expect(target.fetches).toBe(1);
    // The same records in a topic deleted and created again: the point was learned under the old id, so
    // the search starts from the timestamp floor instead (the record at 1500 alone cannot tell).
    const recreated = new MemoryTarget(padded, 100);
    recreated.topicId = 'topic-id-1';
    expect(
      await translate(recreated, event, { scanLimit: 2_000, duplicateWindow: 20, positions }),
    ).toMatchObject({
      outcome: TranslationOutcome.TRANSLATION_OUTCOME_EXACT,
      targetOffset: 1510,
      method: TranslationMethod.TRANSLATION_METHOD_TIMESTAMP_SCAN,
    });
  });

  it('checks a cached answer against the target before giving it: after an unclean leader election the topic holds other records there', async () => {
    const source: SourceRecord[] = Array.from({ length: 1000 }, (_, offset) => ({
      offset,
      timestampMs: 1000 + offset,
      key: Buffer.from(`k${offset}`),
      value: Buffer.from(`v${offset}`),
    }));
    const target = new MemoryTarget(
      copiesOf(
        source,
        source.map((r) => r.offset),
      ),
      50,
    );
    const locator = locatorFor(target, { duplicateWindow: 20 });
    const event = commitEvent(source, 400);
    expect(await translate(target, event, { locator })).toMatchObject({ targetOffset: 400 });
    // The same topic, but its new leader lacked the records and they were copied again from offset 100
    // on: source 400 is at 300 now, and only the leader epoch tells.
    target.leaderEpoch += 1;
    target.records = copiesOf(
      source,
      source.slice(100).map((r) => r.offset),
    );
    const before = locator.hits;
    expect(await translate(target, event, { locator })).toMatchObject({
      outcome: TranslationOutcome.TRANSLATION_OUTCOME_EXACT,
      targetOffset: 300,
    });
    expect(locator.hits).toBe(before);
    // Unchanged, the answer comes from the cache (after one read to check it).
    expect(await translate(target, event, { locator })).toMatchObject({ targetOffset: 300 });
    expect(locator.hits).toBe(before + 1);
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
    expect(decide(beyond, undefined, undefined).refusalReason).toBe(
      RefusalReason.REFUSAL_REASON_INVALID_SOURCE_OFFSET,
    );
    const unresolvable = OffsetCommitted.fromPartial({
      anchorStatus: AnchorStatus.ANCHOR_STATUS_UNRESOLVABLE,
    });
    expect(decide(unresolvable, undefined, undefined).refusalReason).toBe(
      RefusalReason.REFUSAL_REASON_ANCHOR_UNRESOLVED,
    );
  });

  it('waits for a missing topic and refuses a missing partition; keeps every offset within the log start and end', () => {
    const event = OffsetCommitted.fromPartial({
      anchorStatus: AnchorStatus.ANCHOR_STATUS_RESOLVED,
      nextRecord: { offset: 5, timestampMs: 1, fingerprint: 'f' },
    });
    // An exhausted window is retried first (a replicator still catching up), then falls back.
    const exhausted = { kind: 'window-exhausted' as const, fallbackOffset: 8, detail: 'window ran out' };
    expect(decide(event, exhausted, undefined, { fallBack: false, exhaustedFallsBack: false }).outcome).toBe(
      TranslationOutcome.TRANSLATION_OUTCOME_PENDING,
    );
    expect(
      decide(event, exhausted, undefined, { fallBack: false, exhaustedFallsBack: true }).targetOffset,
    ).toBe(8);
    expect(decide(event, { kind: 'topic-missing', detail: '' }, undefined).outcome).toBe(
      TranslationOutcome.TRANSLATION_OUTCOME_PENDING,
    );
    expect(decide(event, { kind: 'partition-missing', detail: '' }, undefined).refusalReason).toBe(
      RefusalReason.REFUSAL_REASON_PARTITION_MISSING,
    );
    const bounds = { logStartOffset: 7, highWatermark: 9 };
    expect(decide(event, { kind: 'window-exhausted', fallbackOffset: 3, detail: '' }, bounds)).toMatchObject({
      outcome: TranslationOutcome.TRANSLATION_OUTCOME_INEXACT,
      method: TranslationMethod.TRANSLATION_METHOD_LOG_START_CLAMP,
      targetOffset: 7,
    });
    const found = (offset: number): Location => ({
      kind: 'found',
      offset,
      firstCopy: offset,
      role: 'next',
      exact: true,
      detail: '',
      method: 'timestamp-scan',
    });
    expect(decide(event, found(4), bounds)).toMatchObject({
      method: TranslationMethod.TRANSLATION_METHOD_LOG_START_CLAMP,
      targetOffset: 7,
    });
    // Past the log end (the partition shrank since it was read): never committed, searched again.
    expect(decide(event, found(10), bounds)).toMatchObject({
      outcome: TranslationOutcome.TRANSLATION_OUTCOME_PENDING,
      targetOffset: -1,
    });
  });
});
