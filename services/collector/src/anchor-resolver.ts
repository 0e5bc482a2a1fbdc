// Pins a committed offset to the records around it, so that any cluster holding copies of those records
// can find the same position. For a committed offset c of a topic partition:
//   - last consumed: the last data record before c (control records, aborted transactional records and
//     compaction gaps are not data a consumer ever sees);
//   - next record: the first data record at or after c, when one exists (a caught-up consumer has none).
// Lookups for many commits go out together (one ListOffsets and one Fetch per broker per round), and
// results below the high watermark are cached: those records never change.
import { AnchorStatus, TimestampType, type Anchor, type OffsetSyncError } from '@offsetsync/contracts';
import { type PartitionBounds, type TopicPartition } from '@offsetsync/kafka';
import { distinctAround } from './distinct-neighbourhood.js';

/** A data record as the resolver needs it. */
export interface SourceRecord {
  offset: number;
  timestampMs: number;
  timestampType: 'create-time' | 'log-append-time';
  fingerprint: string;
  keySize: number;
  valueSize: number;
}

/** Where the resolver reads; the collector backs it with the Kafka adapter, tests with an in-memory log. */
export interface AnchorRecordSource {
  /** Bounds of each partition, or the error that kept them from being read (for example a missing topic). */
  bounds(partitions: readonly TopicPartition[]): Promise<Array<PartitionBounds | OffsetSyncError>>;
  /**
   * Committed data records from each requested offset on, in offset order: no control records, no records
   * of aborted transactions. May return fewer records than exist; an empty list means none were there.
   * Records after the first one at or after `until` (when given) may be left out: the search needs none.
   */
  records(
    requests: ReadonlyArray<TopicPartition & { offset: number; until?: number }>,
  ): Promise<Array<SourceRecord[] | OffsetSyncError>>;
}

export interface AnchorResolution {
  status: AnchorStatus;
  detail: string;
  lastConsumed?: Anchor;
  nextRecord?: Anchor;
  logStartOffset: number;
  logEndOffset: number;
  /** How far around the committed offset the source records are distinct (see distinct-neighbourhood.ts). */
  distinctAround: number;
}

export interface CommitPosition extends TopicPartition {
  offset: number;
}

/** How far back the search for the last consumed record reaches, window by window. */
const LOOKBACK_WINDOWS = [1, 16, 256, 4096, 65_536] as const;

function toAnchor(record: SourceRecord): Anchor {
  return {
    offset: record.offset,
    timestampMs: record.timestampMs,
    timestampType:
      record.timestampType === 'log-append-time'
        ? TimestampType.TIMESTAMP_TYPE_LOG_APPEND_TIME
        : TimestampType.TIMESTAMP_TYPE_CREATE_TIME,
    fingerprint: record.fingerprint,
    keySize: record.keySize,
    valueSize: record.valueSize,
  };
}

/**
 * The status a commit gets from the partition bounds alone, before any record is read; undefined when
 * records must be read.
 */
function classifyByBounds(offset: number, bounds: PartitionBounds): AnchorResolution | undefined {
  const base = {
    logStartOffset: bounds.logStartOffset,
    logEndOffset: bounds.highWatermark,
    distinctAround: 0,
  };
  if (offset > bounds.highWatermark) {
    return {
      ...base,
      status: AnchorStatus.ANCHOR_STATUS_BEYOND_LOG_END,
      detail: `committed offset ${offset} is past the log end ${bounds.highWatermark}`,
    };
  }
  if (bounds.logStartOffset >= bounds.highWatermark) {
    return {
      ...base,
      status: AnchorStatus.ANCHOR_STATUS_EMPTY_PARTITION,
      detail: `partition holds no records (log start ${bounds.logStartOffset}, end ${bounds.highWatermark})`,
    };
  }
  return undefined;
}

/** Combines what was found into the resolution; pure. */
function finishResolution(
  offset: number,
  bounds: PartitionBounds,
  found: {
    lastConsumed?: SourceRecord | undefined;
    nextRecord?: SourceRecord | undefined;
    searchedToLogStart: boolean;
  },
): AnchorResolution {
  const base = {
    logStartOffset: bounds.logStartOffset,
    logEndOffset: bounds.highWatermark,
    distinctAround: 0,
  };
  const lastConsumed = found.lastConsumed === undefined ? undefined : toAnchor(found.lastConsumed);
  const nextRecord = found.nextRecord === undefined ? undefined : toAnchor(found.nextRecord);
  const anchors = {
    ...(lastConsumed === undefined ? {} : { lastConsumed }),
    ...(nextRecord === undefined ? {} : { nextRecord }),
  };
  const logAppendTime = [found.lastConsumed, found.nextRecord].some(
    (r) => r?.timestampType === 'log-append-time',
  );
  if (logAppendTime) {
    return {
      ...base,
      ...anchors,
      status: AnchorStatus.ANCHOR_STATUS_LOG_APPEND_TIME,
      detail: 'the topic uses LogAppendTime: its timestamps are local to the source cluster',
    };
  }
  if (lastConsumed === undefined && nextRecord === undefined) {
    return {
      ...base,
      status: AnchorStatus.ANCHOR_STATUS_UNRESOLVABLE,
      detail: `no committed data record around offset ${offset} could be read`,
    };
  }
  if (lastConsumed === undefined && found.searchedToLogStart) {
    return {
      ...base,
      ...anchors,
      status: AnchorStatus.ANCHOR_STATUS_LOG_START,
      detail:
        offset <= bounds.logStartOffset
          ? `committed offset ${offset} is at or before the log start ${bounds.logStartOffset}`
          : `no data record is retained before offset ${offset}`,
    };
  }
  if (nextRecord === undefined && offset >= bounds.highWatermark) {
    return {
      ...base,
      ...anchors,
      status: AnchorStatus.ANCHOR_STATUS_LOG_END,
      detail: 'the consumer is caught up',
    };
  }
  return { ...base, ...anchors, status: AnchorStatus.ANCHOR_STATUS_RESOLVED, detail: '' };
}

function partitionKey(tp: TopicPartition): string {
  return `${tp.partition}\u0000${tp.topic}`;
}

function commitKey(commit: CommitPosition): string {
  return `${commit.offset}\u0000${partitionKey(commit)}`;
}

/** A small LRU map: Map keeps insertion order, so the first key is the least recently used. */
class LruCache<V> {
  private readonly entries = new Map<string, V>();

  constructor(private readonly capacity: number) {}

  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}

export interface AnchorSearch {
  commit: CommitPosition;
  bounds: PartitionBounds;
  /** Where the next read starts. */
  cursor: number;
  /** Index into LOOKBACK_WINDOWS of the current look-back. */
  window: number;
  lastConsumed?: SourceRecord | undefined;
  nextRecord?: SourceRecord | undefined;
  done: boolean;
  searchedToLogStart: boolean;
}

/** Rounds of reads before a search settles for what it found (a look-back per window plus continuations). */
const MAX_ROUNDS = 12;

/**
 * Folds one read into a search. Pure apart from mutating `search`.
 *
 * A read returns data records from `search.cursor` on, possibly cut short. It "covers" the commit when it
 * reaches a record at or after c, or returns nothing at all (then nothing lies between the cursor and the
 * log end). Only a covering read settles the last record before c; a read cut short before c moves the
 * cursor forward past what it returned.
 */
function absorbRead(search: AnchorSearch, records: readonly SourceRecord[]): void {
  const c = search.commit.offset;
  let lastBefore: SourceRecord | undefined;
  let firstAtOrAfter: SourceRecord | undefined;
  for (const record of records) {
    if (record.offset < c) lastBefore = record;
    else {
      firstAtOrAfter = record;
      break;
    }
  }
  if (lastBefore !== undefined) search.lastConsumed = lastBefore;
  const covered = firstAtOrAfter !== undefined || records.length === 0;
  if (!covered) {
    search.cursor = (lastBefore?.offset ?? search.cursor) + 1;
    return;
  }
  search.nextRecord = firstAtOrAfter;
  if (search.lastConsumed !== undefined || c <= search.bounds.logStartOffset) {
    search.searchedToLogStart ||= search.lastConsumed === undefined;
    search.done = true;
    return;
  }
  // Nothing before c in [cursor, c): look further back, up to the log start.
  if (search.cursor <= search.bounds.logStartOffset) {
    search.searchedToLogStart = true;
    search.done = true;
  } else if (search.window >= LOOKBACK_WINDOWS.length - 1) {
    search.done = true;
  } else {
    search.window += 1;
    search.cursor = Math.max(c - (LOOKBACK_WINDOWS[search.window] ?? 1), search.bounds.logStartOffset);
  }
}

/** Resolves anchors for many commits at once. */
export class AnchorResolver {
  private readonly cache: LruCache<AnchorResolution>;
  private hits = 0;
  private misses = 0;

  private readonly distinctCheckRecords: number;

  constructor(
    private readonly source: AnchorRecordSource,
    options: {
      cacheSize: number;
      /** Records on each side of a commit checked for identical records (0: not checked). Default: 0. */
      distinctCheckRecords?: number;
    },
  ) {
    this.cache = new LruCache(options.cacheSize);
    this.distinctCheckRecords = options.distinctCheckRecords ?? 0;
  }

  get stats(): { hits: number; misses: number; cached: number } {
    return { hits: this.hits, misses: this.misses, cached: this.cache.size };
  }

  /** Resolutions in the order of `commits`. Never throws for a single partition: its error becomes UNRESOLVABLE. */
  async resolve(commits: readonly CommitPosition[]): Promise<AnchorResolution[]> {
    const results = new Map<string, AnchorResolution>();
    const todo = new Map<string, CommitPosition>();
    for (const commit of commits) {
      const key = commitKey(commit);
      const cached = this.cache.get(key);
      if (cached !== undefined) {
        this.hits += 1;
        results.set(key, cached);
      } else if (!todo.has(key)) {
        this.misses += 1;
        todo.set(key, commit);
      }
    }
    if (todo.size > 0) {
      for (const [key, resolution] of await this.lookUp([...todo.values()])) {
        results.set(key, resolution);
        const commit = todo.get(key);
        // Records below the log end never change; a caught-up position will get a next record later.
        if (commit !== undefined && commit.offset < resolution.logEndOffset) this.cache.set(key, resolution);
      }
    }
    return commits.map((commit) => {
      const resolution = results.get(commitKey(commit));
      if (resolution === undefined) throw new Error('anchor resolution lost a commit');
      return resolution;
    });
  }

  private async lookUp(commits: CommitPosition[]): Promise<Map<string, AnchorResolution>> {
    const resolved = new Map<string, AnchorResolution>();
    const partitions = [
      ...new Map(commits.map((c) => [partitionKey(c), { topic: c.topic, partition: c.partition }])).values(),
    ];
    const boundsList = await this.source.bounds(partitions);
    const boundsByPartition = new Map(partitions.map((tp, i) => [partitionKey(tp), boundsList[i]]));

    const searches: AnchorSearch[] = [];
    for (const commit of commits) {
      const bounds = boundsByPartition.get(partitionKey(commit));
      if (bounds !== undefined && !('highWatermark' in bounds) && bounds.retryable) throw bounds;
      if (bounds === undefined || !('highWatermark' in bounds)) {
        resolved.set(commitKey(commit), {
          status: AnchorStatus.ANCHOR_STATUS_UNRESOLVABLE,
          detail:
            bounds === undefined
              ? 'partition bounds missing'
              : `cannot read the partition: ${bounds.message}`,
          logStartOffset: -1,
          logEndOffset: -1,
          distinctAround: 0,
        });
        continue;
      }
      const early = classifyByBounds(commit.offset, bounds);
      if (early !== undefined) {
        resolved.set(commitKey(commit), early);
        continue;
      }
      const c = commit.offset;
      searches.push({
        commit,
        bounds,
        cursor:
          c <= bounds.logStartOffset
            ? bounds.logStartOffset
            : Math.max(c - LOOKBACK_WINDOWS[0], bounds.logStartOffset),
        window: 0,
        done: false,
        searchedToLogStart: c <= bounds.logStartOffset,
      });
    }

    // Round by round: every search that still needs records asks once, all together.
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const asking = searches.filter((s) => !s.done);
      if (asking.length === 0) break;
      const answers = await this.source.records(
        asking.map((s) => ({
          topic: s.commit.topic,
          partition: s.commit.partition,
          offset: s.cursor,
          until: s.commit.offset,
        })),
      );
      asking.forEach((search, i) => {
        const answer = answers[i];
        if (Array.isArray(answer)) {
          absorbRead(search, answer);
          return;
        }
        // A read that may work when tried again (a timeout, a broker away) fails the whole batch, which is
        // then redelivered: publishing "unresolvable" for a passing hiccup would lose an exact translation.
        if (answer?.retryable === true) throw answer;
        // Otherwise the search ends; what was found so far stands and the status says what is missing.
        search.done = true;
      });
    }

    const finished = searches.map((search) => ({
      search,
      resolution: finishResolution(search.commit.offset, search.bounds, {
        lastConsumed: search.lastConsumed,
        nextRecord: search.nextRecord,
        searchedToLogStart: search.searchedToLogStart,
      }),
    }));
    await this.checkDistinct(
      finished.filter((f) => f.resolution.status === AnchorStatus.ANCHOR_STATUS_RESOLVED),
    );
    for (const { search, resolution } of finished) resolved.set(commitKey(search.commit), resolution);
    return resolved;
  }

  /**
   * Reads the records within distinctCheckRecords of each commit and sets how far around it they are
   * distinct. Commits of one partition close to each other share one read of the records around them all.
   * A read that fails leaves 0 (nothing is claimed), except a retryable one, which fails the batch.
   */
  private async checkDistinct(
    items: ReadonlyArray<{ search: AnchorSearch; resolution: AnchorResolution }>,
  ): Promise<void> {
    const limit = this.distinctCheckRecords;
    if (limit === 0 || items.length === 0) return;
    const ranges = items.map(({ search }) => {
      const c = search.commit.offset;
      return {
        search,
        from: Math.max(search.bounds.logStartOffset, c - limit),
        until: Math.min(search.bounds.highWatermark, c + limit),
      };
    });
    const reads = mergedReads(ranges);
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const open = reads.filter((r) => !r.done && r.cursor < r.until);
      if (open.length === 0) break;
      const answers = await this.source.records(
        open.map((r) => ({ topic: r.topic, partition: r.partition, offset: r.cursor, until: r.until })),
      );
      open.forEach((read, i) => {
        const answer = answers[i];
        if (!Array.isArray(answer)) {
          if (answer?.retryable === true) throw answer;
          read.done = true;
          read.failed = true;
          return;
        }
        for (const r of answer) if (r.offset >= read.cursor && r.offset < read.until) read.records.push(r);
        const last = answer.at(-1);
        if (last === undefined || last.offset + 1 >= read.until) read.done = true;
        else read.cursor = last.offset + 1;
      });
    }
    const readOf = new Map(reads.flatMap((read) => read.ranges.map((range) => [range, read] as const)));
    ranges.forEach((range, i) => {
      const read = readOf.get(range)!;
      const records = read.failed ? [] : withinRange(read.records, range.from, range.until);
      items[i]!.resolution.distinctAround = read.failed
        ? 0
        : distinctAround(records, range.search.commit.offset, limit, {
            fromLogStart: range.from === range.search.bounds.logStartOffset,
          });
    });
  }
}

interface DistinctRange {
  search: AnchorSearch;
  from: number;
  until: number;
}

/** One read of a partition's records from `from` to `until`, covering the ranges of several commits. */
interface MergedRead extends TopicPartition {
  ranges: DistinctRange[];
  from: number;
  until: number;
  cursor: number;
  records: SourceRecord[];
  done: boolean;
  failed: boolean;
}

/** The ranges of each partition, overlapping or adjacent ones merged into one read. */
function mergedReads(ranges: readonly DistinctRange[]): MergedRead[] {
  const byPartition = new Map<string, DistinctRange[]>();
  for (const range of ranges) {
    const key = partitionKey(range.search.commit);
    const list = byPartition.get(key) ?? [];
    list.push(range);
    byPartition.set(key, list);
  }
  const reads: MergedRead[] = [];
  for (const list of byPartition.values()) {
    list.sort((a, b) => a.from - b.from);
    let current: MergedRead | undefined;
    for (const range of list) {
      if (current !== undefined && range.from <= current.until) {
        current.until = Math.max(current.until, range.until);
        current.ranges.push(range);
        continue;
      }
      const { topic, partition } = range.search.commit;
      current = {
        topic,
        partition,
        ranges: [range],
        from: range.from,
        until: range.until,
        cursor: range.from,
        records: [],
        done: false,
        failed: false,
      };
      reads.push(current);
    }
  }
  return reads;
}

/** The records (in offset order) with offsets from `from` to before `until`. */
function withinRange(records: readonly SourceRecord[], from: number, until: number): SourceRecord[] {
  const firstAtOrAfter = (offset: number): number => {
    let lo = 0;
    let hi = records.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (records[mid]!.offset < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return records.slice(firstAtOrAfter(from), firstAtOrAfter(until));
}
