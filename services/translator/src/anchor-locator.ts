// Finds where consumer groups resume on a target cluster, many source commits at a time: each round sends
// one request per broker for every commit still looking. For each commit it reads a window of target
// records that starts at a floor below which no copy of its anchors can lie, finds the first copy of an
// anchor in it, reads on until later copies would have shown, and lets resumePoint() decide. Candidates
// are checked by timestamp, key and value, never taken on position alone.
//   Floors, best first:
//   1. learned: the target offset of the first copy of an earlier source record (PositionMemory), once the
//      record there was read again and still is that copy; right even when timestamps are not monotonic;
//   2. timestamp: ListOffsets for the first offset with timestamp >= T (kept -1 means: not arrived);
//   3. the log start, whenever it is above either (retention or DeleteRecords on the target).
// A found answer is cached, and checked again against the target before it is used.
import { ErrorCodes, type Anchor, type OffsetSyncError } from '@offsetsync/contracts';
import type {
  FetchAnswer,
  FetchedRecord,
  FetchRequest,
  KafkaAdapter,
  TopicIdentity,
  TopicPartition,
} from '@offsetsync/kafka';
import type { LearnedPoint } from './position-memory.js';
import { isCopyOf as matches, resumePoint } from './resume-point.js';
import { TargetRecords, type CheckedRuns, type PartitionIdentity } from './target-records.js';
import type { Location, TargetBounds } from './translation-plan.js';

/** One source commit to locate: its anchors, and the learned point below them, if any. */
export interface LocateRequest {
  topic: string;
  partition: number;
  /** The record at the committed offset; undefined when the source had none yet. */
  next?: Anchor | undefined;
  /** The last record before the committed offset; undefined at the source's log start. */
  last?: Anchor | undefined;
  /** The learned point with the greatest source offset below the anchors. */
  floor?: LearnedPoint | undefined;
  /** Source records on each side of the commit seen to be distinct (OffsetCommitted.distinctAround). */
  distinctAround: number;
}

export interface LocatorOptions {
  /** Offsets on each side of the bisection's landing point that a guided scan starts from. */
  probeWindow: number;
  /** Records examined from the floor before the search gives up on an exact match. */
  scanLimit: number;
  /**
   * Records after the first copy of an anchor that are read for later copies (runs written twice), and
   * records before the floor that are read to recognise a rewrite of consumed records.
   */
  duplicateWindow: number;
  /** Found answers remembered across calls. */
  cacheSize: number;
  /** Bytes of target records kept across calls (0 keeps none): see TargetRecords. */
  recordCacheBytes: number;
}

type Reader = Pick<KafkaAdapter, 'partitionBounds' | 'listOffsets' | 'fetchRecords' | 'topicIdentities'>;

const MAX_ROUNDS = 64;

/** Bytes one window read asks for per partition (the broker still returns a larger first batch whole). */
const WINDOW_READ_BYTES = 128 * 1024;

export function partitionKey(topic: string, partition: number): string {
  return `${partition}\u0000${topic}`;
}

function missing(error: OffsetSyncError): Location {
  if (error.code === ErrorCodes.TOPIC_MISSING)
    return { kind: 'topic-missing', detail: 'the topic does not exist on the target yet' };
  if (error.code === ErrorCodes.PARTITION_MISSING)
    return { kind: 'partition-missing', detail: 'the partition does not exist on the target' };
  return { kind: 'failed', detail: error.message, error };
}

/** What the locator tells about one commit: where it stands, and whether its learned floor failed. */
export interface LocateResult {
  location: Location;
  /** The learned point did not hold on the target: every point of the partition should be forgotten. */
  floorFailed: boolean;
}

/** One commit's search. */
interface Search {
  request: LocateRequest;
  bounds?: TargetBounds;
  location?: Location;
  floorFailed: boolean;
  /** The floor: no copy of an anchor lies below it. Undefined until known. */
  floor?: number;
  method: 'delta-probe' | 'timestamp-scan';
  /** The records read from max(log start, floor - duplicateWindow) on, without a hole. */
  window: FetchedRecord[];
  /** The next offset to read. */
  cursor: number;
  /** Records at or after the floor read so far. */
  scanned: number;
  /** The index in `window` of the first copy of an anchor, once seen. */
  firstMatch?: number;
  /** The learned point's record must be checked at this offset before the floor is trusted. */
  verify?: LearnedPoint;
  /** Where a guided scan (after a timestamp bisection) reads next; it only tells whether a copy arrived. */
  guided?: number;
  /** Where the guided scan started. */
  guidedFrom?: number;
  /** The timestamp of the first record read at or after the floor. */
  floorTimestamp?: number;
}

function requestKey(r: LocateRequest): string {
  const anchor = (a: Anchor | undefined) => (a === undefined ? '-' : `${a.offset}:${a.fingerprint}`);
  return `${anchor(r.next)}\u0000${anchor(r.last)}\u0000${r.distinctAround}\u0000${partitionKey(r.topic, r.partition)}`;
}

/** The earliest timestamp of the request's anchors. */
function earliestTimestamp(r: LocateRequest): number {
  return Math.min(...[r.next, r.last].filter((a): a is Anchor => a !== undefined).map((a) => a.timestampMs));
}

/** A cached answer, with the copy it rests on (checked again before the answer is used). */
interface Cached {
  location: Extract<Location, { kind: 'found' }>;
  check: { offset: number; anchor: Anchor };
  /** The id of the topic the answer was found in. */
  topicId: string | undefined;
}

/** What one locate call knows for all its searches. */
interface Call {
  /** Partitions whose kept records were checked (or read) in this call. */
  checked: CheckedRuns;
  /** Topic ids and leader epochs as of this call; a topic whose identity could not be read is absent. */
  identities: ReadonlyMap<string, TopicIdentity>;
}

function topicIdOf(call: Call, topic: string): string | undefined {
  return call.identities.get(topic)?.topicId;
}

function identityOf(call: Call, topic: string, partition: number): PartitionIdentity {
  const identity = call.identities.get(topic);
  return { topicId: identity?.topicId, leaderEpoch: identity?.leaderEpochs.get(partition) };
}

export class AnchorLocator {
  /** Found answers by request key; Map order makes the first key the least recently used. */
  private readonly found = new Map<string, Cached>();
  /** Target records read in earlier calls, checked again before use. */
  private readonly records: TargetRecords;
  hits = 0;

  constructor(
    private readonly reader: Reader,
    private readonly options: LocatorOptions,
  ) {
    // A window is the duplicate window before the floor and twice that after the first copy.
    this.records = new TargetRecords(options.recordCacheBytes, Math.max(256, 4 * options.duplicateWindow));
  }

  /**
   * Results in request order, and the bounds of every partition that could be read. Many groups at the
   * same position ask the same question: it is asked once, and a found answer is remembered (and checked
   * against the target again before it is given).
   */
  async locate(
    requests: readonly LocateRequest[],
  ): Promise<{ results: LocateResult[]; bounds: Map<string, TargetBounds> }> {
    const unique = new Map<string, LocateRequest>();
    for (const request of requests) unique.set(requestKey(request), request);
    const searches = [...unique.values()].map((request): Search => ({
      request,
      floorFailed: false,
      method: 'timestamp-scan',
      window: [],
      cursor: 0,
      scanned: 0,
    }));
    const [bounds, identities] = await Promise.all([
      this.readBounds(searches),
      this.readIdentities(searches),
    ]);
    const call: Call = { checked: new Set(), identities };
    await this.checkRecords(searches, call);
    await this.useCache(searches, call);
    await this.search(
      searches.filter((s) => s.location === undefined),
      call,
    );
    const answers = new Map<string, LocateResult>();
    for (const s of searches) {
      const location = s.location ?? {
        kind: 'window-exhausted' as const,
        fallbackOffset: s.floor ?? s.bounds?.logStartOffset ?? 0,
        detail: 'search rounds ran out',
      };
      answers.set(requestKey(s.request), { location, floorFailed: s.floorFailed });
    }
    return { results: requests.map((r) => answers.get(requestKey(r))!), bounds };
  }

  /** Bounds of partitions, for translations that need no anchor (an empty source partition). */
  async partitionBounds(partitions: readonly TopicPartition[]): Promise<Map<string, TargetBounds>> {
    const bounds = new Map<string, TargetBounds>();
    if (partitions.length === 0) return bounds;
    const answers = await this.reader.partitionBounds(partitions);
    partitions.forEach((p, i) => {
      const answer = answers[i];
      if (answer !== undefined && 'highWatermark' in answer)
        bounds.set(partitionKey(p.topic, p.partition), answer);
    });
    return bounds;
  }

  /** Reads every partition's bounds; a partition that cannot be read settles its searches. */
  private async readBounds(searches: Search[]): Promise<Map<string, TargetBounds>> {
    const bounds = new Map<string, TargetBounds>();
    if (searches.length === 0) return bounds;
    const partitions = [
      ...new Map(
        searches.map((s) => [partitionKey(s.request.topic, s.request.partition), s.request]),
      ).values(),
    ];
    const answers = await this.reader.partitionBounds(partitions);
    const errors = new Map<string, OffsetSyncError>();
    partitions.forEach((p, i) => {
      const answer = answers[i];
      if (answer === undefined) return;
      if ('highWatermark' in answer) bounds.set(partitionKey(p.topic, p.partition), answer);
      else errors.set(partitionKey(p.topic, p.partition), answer);
    });
    for (const s of searches) {
      const key = partitionKey(s.request.topic, s.request.partition);
      const error = errors.get(key);
      if (error !== undefined) s.location = missing(error);
      const b = bounds.get(key);
      if (b !== undefined) s.bounds = b;
    }
    return bounds;
  }

  /**
   * The ids and leader epochs of the searched topics. Kept records and cached answers of a topic without
   * them are not used: a failed read only costs reading the target again.
   */
  private async readIdentities(searches: readonly Search[]): Promise<ReadonlyMap<string, TopicIdentity>> {
    if (searches.length === 0) return new Map();
    try {
      return await this.reader.topicIdentities([...new Set(searches.map((s) => s.request.topic))]);
    } catch {
      return new Map();
    }
  }

  /**
   * Checks the kept records of the partitions searched in this call: one read from each run's end at the
   * leader epoch it was read under, which returns at once (no wait for new records) and only when the
   * leader still has that epoch.
   */
  private async checkRecords(searches: readonly Search[], call: Call): Promise<void> {
    const checks = new Map<string, FetchRequest>();
    for (const s of searches) {
      const { topic, partition } = s.request;
      const key = partitionKey(topic, partition);
      if (s.bounds === undefined || checks.has(key)) continue;
      const check = this.records.bound(key, s.bounds, identityOf(call, topic, partition));
      if (check !== undefined) checks.set(key, { topic, partition, ...check, maxBytes: WINDOW_READ_BYTES });
    }
    if (checks.size === 0) return;
    const asked = [...checks.entries()];
    const answers = await this.reader.fetchRecords(
      asked.map(([, read]) => read),
      { maxWaitMs: 0 },
    );
    asked.forEach(([key], i) => this.records.confirm(key, answers[i], call.checked));
  }

  /**
   * Gives cached answers whose copy is still there: the record at its offset, within the bounds, is
   * still the copy of its anchor. Any other answer is searched again, and forgotten.
   */
  private async useCache(searches: Search[], call: Call): Promise<void> {
    const hits = searches.flatMap((s) => {
      const key = requestKey(s.request);
      const cached = s.location === undefined ? this.found.get(key) : undefined;
      return cached === undefined ? [] : [{ s, key, cached }];
    });
    if (hits.length === 0) return;
    // The record an answer rests on, from the records checked in this call when they hold it.
    const kept = hits.map(({ s, cached }) =>
      this.records.recordAt(
        partitionKey(s.request.topic, s.request.partition),
        cached.check.offset,
        call.checked,
      ),
    );
    const toRead = hits.filter((_, i) => !kept[i]!.held);
    const answers =
      toRead.length === 0
        ? []
        : await this.reader.fetchRecords(
            toRead.map(({ s, cached }) => ({
              topic: s.request.topic,
              partition: s.request.partition,
              offset: cached.check.offset,
              maxBytes: 1024,
            })),
          );
    const read = new Map(toRead.map((hit, i) => [hit, answers[i]?.records[0]]));
    hits.forEach((hit, i) => {
      const { s, key, cached } = hit;
      this.found.delete(key);
      const record = kept[i]!.held ? kept[i]!.record : read.get(hit);
      const bounds = s.bounds;
      const holds =
        bounds !== undefined &&
        cached.topicId !== undefined &&
        cached.topicId === topicIdOf(call, s.request.topic) &&
        record?.offset === cached.check.offset &&
        matches(record, cached.check.anchor) &&
        cached.location.offset >= bounds.logStartOffset &&
        cached.location.offset <= bounds.highWatermark;
      if (!holds) return;
      this.hits += 1;
      this.found.set(key, cached);
      s.location = cached.location;
    });
  }

  private remember(
    s: Search,
    location: Extract<Location, { kind: 'found' }>,
    anchor: Anchor,
    topicId: string | undefined,
  ): void {
    const key = requestKey(s.request);
    this.found.set(key, { location, check: { offset: location.firstCopy, anchor }, topicId });
    if (this.found.size > this.options.cacheSize) this.found.delete(this.found.keys().next().value!);
  }

  private async search(searches: Search[], call: Call): Promise<void> {
    if (searches.length === 0) return;
    for (const s of searches) this.placeLearnedFloor(s, topicIdOf(call, s.request.topic));
    await this.timestampFloors(searches.filter((s) => s.location === undefined && s.floor === undefined));
    await this.bisect(searches.filter((s) => s.location === undefined && s.floor !== undefined));
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const open = searches.filter((s) => s.location === undefined);
      if (open.length === 0) return;
      await this.readRound(open, call);
      // A learned floor that did not hold: search again from the timestamp floor.
      const retry = open.filter((s) => s.location === undefined && s.floor === undefined);
      if (retry.length > 0) await this.timestampFloors(retry);
    }
  }

  /**
   * Starts at the learned point when it was learned under the topic's current id and lies within the
   * bounds and within reach of the anchors.
   */
  private placeLearnedFloor(s: Search, topicId: string | undefined): void {
    const point = s.request.floor;
    const bounds = s.bounds;
    if (point === undefined || bounds === undefined) return;
    if (point.topicId !== topicId) {
      // Deleted and recreated since (a new id), or the id is unknown now: search from the timestamp floor.
      s.floorFailed = topicId !== undefined;
      return;
    }
    const nearest = Math.min(
      ...[s.request.next, s.request.last].filter((a): a is Anchor => a !== undefined).map((a) => a.offset),
    );
    if (nearest - point.anchor.offset > this.options.scanLimit) return;
    if (point.targetOffset >= bounds.highWatermark) {
      // The partition is shorter than it was: truncated, or deleted and recreated.
      s.floorFailed = true;
      return;
    }
    s.method = 'delta-probe';
    if (point.targetOffset < bounds.logStartOffset) {
      // Below the log start now: the log start is a floor itself.
      this.startAt(s, bounds.logStartOffset);
      return;
    }
    s.verify = point;
    this.startAt(s, point.targetOffset);
  }

  private startAt(s: Search, floor: number): void {
    const logStart = s.bounds?.logStartOffset ?? 0;
    s.floor = Math.max(floor, logStart);
    s.cursor = Math.max(logStart, s.floor - this.options.duplicateWindow);
    s.window = [];
    s.scanned = 0;
    delete s.firstMatch;
    delete s.floorTimestamp;
  }

  private async timestampFloors(searches: Search[]): Promise<void> {
    if (searches.length === 0) return;
    const answers = await this.reader.listOffsets(
      searches.map((s) => ({
        topic: s.request.topic,
        partition: s.request.partition,
        timestamp: earliestTimestamp(s.request),
      })),
    );
    searches.forEach((s, i) => {
      const answer = answers[i];
      if (answer === undefined) return;
      s.method = 'timestamp-scan';
      delete s.verify;
      if (answer.error) {
        s.location = missing(answer.error);
      } else if (answer.offset < 0) {
        // The broker's -1: no record with a timestamp >= T. Neither anchor has been replicated yet.
        s.location = {
          kind: 'not-arrived',
          detail: `no record with timestamp >= ${earliestTimestamp(s.request)} on the target yet`,
        };
      } else {
        this.startAt(s, answer.offset);
      }
    });
  }

  /**
   * One record stamped far ahead makes every timestamp lookup below it land early, possibly more records
   * back than the search may read. Bisecting the offsets between the floor and the log end on
   * "timestamp >= T" finds where the anchors most likely are; a scan from there tells whether a copy has
   * arrived at all (the scan from the floor alone would run out of records and fall back). A copy found
   * there is not used: only the scan from the floor can show that no earlier copy exists.
   */
  private async bisect(searches: Search[]): Promise<void> {
    const ranges = new Map<Search, { lo: number; hi: number }>();
    for (const s of searches) {
      const end = s.bounds?.highWatermark;
      if (
        s.verify === undefined &&
        end !== undefined &&
        s.floor !== undefined &&
        end - s.floor > this.options.scanLimit
      )
        ranges.set(s, { lo: s.floor, hi: end });
    }
    const t = (s: Search) => earliestTimestamp(s.request);
    for (let round = 0; round < 40; round++) {
      const open = [...ranges.entries()].filter(([, r]) => r.hi - r.lo > this.options.probeWindow);
      if (open.length === 0) break;
      const mids = open.map(([, r]) => Math.floor((r.lo + r.hi) / 2));
      const answers = await this.reader.fetchRecords(
        open.map(([s], i) => ({
          topic: s.request.topic,
          partition: s.request.partition,
          offset: mids[i]!,
          maxBytes: 1024,
        })),
      );
      open.forEach(([s, range], i) => {
        const answer = answers[i];
        const first = answer?.error ? undefined : answer?.records[0];
        if (first === undefined || first.timestampMs >= t(s)) range.hi = mids[i]!;
        else range.lo = first.offset + 1;
      });
    }
    for (const [s, range] of ranges) {
      s.guided = Math.max(s.floor!, range.lo - 2 * this.options.probeWindow);
      s.guidedFrom = s.guided;
    }
  }

  /**
   * One fetch for every open search that the records checked in this call cannot serve, and what each
   * read shows.
   */
  private async readRound(searches: Search[], call: Call): Promise<void> {
    const served = searches.map((s) => this.served(s, call.checked));
    const toFetch = searches.filter((_, i) => served[i] === undefined);
    const fetched =
      toFetch.length === 0
        ? []
        : await this.reader.fetchRecords(
            toFetch.map((s) => ({
              topic: s.request.topic,
              partition: s.request.partition,
              offset: s.guided ?? s.cursor,
              // A window is a few hundred records: a megabyte per read would be decoded for nothing.
              maxBytes: WINDOW_READ_BYTES,
            })),
          );
    const answersOf = new Map(toFetch.map((s, i) => [s, fetched[i]]));
    searches.forEach((s, i) => {
      const answer = served[i] ?? answersOf.get(s);
      if (answer !== undefined && served[i] === undefined)
        this.records.absorb(
          partitionKey(s.request.topic, s.request.partition),
          answer,
          call.checked,
          identityOf(call, s.request.topic, s.request.partition),
        );
      if (answer === undefined) return;
      if (answer.error) {
        s.location = missing(answer.error);
        return;
      }
      if (answer.records.some((r) => r.timestampType === 'log-append-time')) {
        s.location = {
          kind: 'log-append-time',
          detail: 'the target topic uses LogAppendTime: its timestamps were rewritten by the target broker',
        };
        return;
      }
      const end = answer.lastStableOffset >= 0 ? answer.lastStableOffset : answer.highWatermark;
      const reachedEnd = answer.nextOffset >= end;
      if (s.guided !== undefined) this.guidedRound(s, answer.records, reachedEnd, answer.nextOffset);
      else this.windowRound(s, answer.records, reachedEnd, answer.nextOffset, end, call);
    });
  }

  /** The next read of the search, from the records checked in this call; undefined when they lack it. */
  private served(s: Search, checked: CheckedRuns): FetchAnswer | undefined {
    const { topic, partition } = s.request;
    const offset = s.guided ?? s.cursor;
    const bounds = s.bounds;
    if (bounds === undefined) return undefined;
    const read = this.records.serve(partitionKey(topic, partition), offset, checked);
    if (read === undefined) return undefined;
    return {
      topic,
      partition,
      requestedOffset: offset,
      records: read.records,
      nextOffset: read.nextOffset,
      // As of this call's bounds: a read that reaches their end is followed by a real one.
      highWatermark: bounds.highWatermark,
      lastStableOffset: -1,
      logStartOffset: bounds.logStartOffset,
    };
  }

  /** A guided scan: a copy found means "arrived" (search from the floor); the log end means "not yet". */
  private guidedRound(s: Search, records: readonly FetchedRecord[], reachedEnd: boolean, next: number): void {
    const { next: n, last: l } = s.request;
    const from = s.guidedFrom ?? s.guided!;
    if (records.some((r) => matches(r, n) || matches(r, l))) {
      delete s.guided;
      return;
    }
    if (reachedEnd) {
      s.location = {
        kind: 'not-arrived',
        detail: `no copy of the anchors between offset ${from}, where their timestamps place them, and the target log end (${next})`,
        fallbackOffset: s.floor!,
      };
      return;
    }
    s.guided = Math.max(next, s.guided! + 1);
    if (s.guided - from > this.options.scanLimit) delete s.guided;
  }

  private windowRound(
    s: Search,
    records: readonly FetchedRecord[],
    reachedEnd: boolean,
    nextOffset: number,
    end: number,
    call: Call,
  ): void {
    const { next, last } = s.request;
    const floor = s.floor!;
    if (s.verify !== undefined) {
      const point = s.verify;
      const record = records.find((r) => r.offset >= point.targetOffset);
      if (record !== undefined || reachedEnd) {
        if (record?.offset !== point.targetOffset || !matches(record, point.anchor)) {
          // The learned copy is gone or is another record: the target changed under the translator.
          s.floorFailed = true;
          delete s.floor;
          delete s.verify;
          return;
        }
        delete s.verify;
      }
    }
    for (const record of records) {
      s.window.push(record);
      if (record.offset >= floor) {
        s.scanned += 1;
        s.floorTimestamp ??= record.timestampMs;
      }
      if (
        s.firstMatch === undefined &&
        record.offset >= floor &&
        (matches(record, next) || matches(record, last))
      )
        s.firstMatch = s.window.length - 1;
    }
    s.cursor = Math.max(nextOffset, s.cursor + 1);
    const settle = this.options.duplicateWindow;
    if (s.firstMatch === undefined) {
      const logStart = s.bounds?.logStartOffset ?? 0;
      const latest = Math.max(
        ...[next, last].filter((a): a is Anchor => a !== undefined).map((a) => a.timestampMs),
      );
      if (
        reachedEnd &&
        logStart > 0 &&
        floor === logStart &&
        s.floorTimestamp !== undefined &&
        s.floorTimestamp > latest
      ) {
        // Not arriving late: the log start is past them (the records there are stamped later).
        s.location = {
          kind: 'removed',
          detail: `no copy of the anchors on the target, whose log start ${logStart} is past them (the record there is stamped ${s.floorTimestamp}, after ${latest})`,
        };
        return;
      }
      if (reachedEnd) {
        s.location = {
          kind: 'not-arrived',
          detail: `scanned to the target log end (${end}) from offset ${floor} without a copy of the anchors`,
          fallbackOffset: floor,
        };
      } else if (s.scanned >= this.options.scanLimit) {
        s.location = {
          kind: 'window-exhausted',
          fallbackOffset: floor,
          detail: `no copy of the anchors within ${this.options.scanLimit} records of offset ${floor}`,
        };
      } else if (s.window.length > 2 * settle + this.options.scanLimit) {
        // Keep what a rewrite could repeat: the records right before the cursor.
        s.window = s.window.slice(-settle);
      }
      return;
    }
    // Later copies of the anchors, and what follows them, must be in the window before deciding.
    if (!reachedEnd && s.window.length - 1 - s.firstMatch < 2 * settle) return;
    const floorIndex = s.window.findIndex((r) => r.offset >= floor);
    const point = resumePoint({
      records: s.window,
      floorIndex,
      next,
      last,
      settleRecords: settle,
      reachesEnd: reachedEnd,
      logStart: s.bounds?.logStartOffset ?? 0,
      distinctAround: s.request.distinctAround,
    });
    if (point.kind === 'no-match') return;

    const location: Extract<Location, { kind: 'found' }> = {
      kind: 'found',
      offset: point.offset,
      firstCopy: point.firstCopy,
      role: point.role,
      exact: point.kind === 'exact',
      detail: point.detail,
      method: s.method,
      topicId: topicIdOf(call, s.request.topic),
      ...(reachedEnd && s.window.length - 1 - s.firstMatch < 2 * settle ? { openEnded: true } : {}),
    };
    s.location = location;
    // A window that reached the log end may still see later copies arrive: such answers are not cached.
    const anchor = point.role === 'next' ? next : last;
    if (!reachedEnd && anchor !== undefined)
      this.remember(s, location, anchor, topicIdOf(call, s.request.topic));
  }
}
