// Finds the counterparts of source anchors on a target cluster, many at a time: each round sends one
// request per broker for every anchor still looking. Every candidate is checked by fingerprint and
// timestamp, never taken on position alone.
//   1. delta probe: a small window around source offset + the partition's learned delta (replication
//      keeps order, so the delta only changes at gaps); this is right even when timestamps are not
//      monotonic, which defeats the timestamp lookup;
//   2. timestamp: ListOffsets for the first offset with timestamp >= T (kept -1 means: not arrived),
//      then a bounded forward scan.
import { ErrorCodes, type Anchor, type OffsetSyncError } from '@offsetsync/contracts';
import type { FetchAnswer, FetchedRecord, KafkaAdapter, TopicPartition } from '@offsetsync/kafka';
import { recordFingerprint } from '@offsetsync/kafka';
import type { Location, TargetBounds } from './translation-plan.js';

export interface LocateRequest {
  topic: string;
  partition: number;
  anchor: Anchor;
  /** A next-record counterpart is the first copy; a last-consumed one the last of consecutive copies. */
  role: 'next' | 'last';
  /** Learned target-minus-source offset delta of the partition, if any. */
  delta?: number | undefined;
}

export interface LocatorOptions {
  /** Offsets on each side of the predicted position that the probe examines. */
  probeWindow: number;
  /** Records examined by the forward scan before it gives up on an exact match. */
  scanLimit: number;
  /** Found counterparts remembered across calls (records on the target do not move). */
  cacheSize: number;
}

type Reader = Pick<KafkaAdapter, 'partitionBounds' | 'listOffsets' | 'fetchRecords'>;

const MAX_SCAN_ROUNDS = 64;

/** Bytes a delta probe asks for per partition (the broker still returns a larger first batch whole). */
const PROBE_BYTES = 64 * 1024;

export function partitionKey(topic: string, partition: number): string {
  return `${partition}\u0000${topic}`;
}

function matches(record: FetchedRecord, anchor: Anchor): boolean {
  return (
    record.timestampMs === anchor.timestampMs &&
    recordFingerprint(record.key, record.value) === anchor.fingerprint
  );
}

/**
 * The counterpart among `records` (in offset order): for a next-record anchor the first match, for a
 * last-consumed anchor the last of the run of consecutive copies that starts at the first match (a
 * replicator that wrote a record twice wrote it back to back). `near` prefers the match closest to it.
 */
function pickMatch(
  records: readonly FetchedRecord[],
  anchor: Anchor,
  role: 'next' | 'last',
  near?: number,
): number | undefined {
  const hits: number[] = [];
  records.forEach((record, i) => {
    if (matches(record, anchor)) hits.push(i);
  });
  if (hits.length === 0) return undefined;
  let first = hits[0]!;
  if (near !== undefined) {
    first = hits.reduce(
      (best, i) => (Math.abs(records[i]!.offset - near) < Math.abs(records[best]!.offset - near) ? i : best),
      first,
    );
  }
  if (role === 'next') return records[first]!.offset;
  let end = first;
  while (end + 1 < records.length && matches(records[end + 1]!, anchor)) end += 1;
  return records[end]!.offset;
}

function missing(error: OffsetSyncError): Location {
  if (error.code === ErrorCodes.TOPIC_MISSING)
    return { kind: 'topic-missing', detail: 'the topic does not exist on the target yet' };
  if (error.code === ErrorCodes.PARTITION_MISSING)
    return { kind: 'partition-missing', detail: 'the partition does not exist on the target' };
  return { kind: 'failed', detail: error.message };
}

/** Where a request stands after a read failed: missing(), with the error kept for a failed read. */
function locationOf(error: OffsetSyncError): Location {
  const location = missing(error);
  return location.kind === 'failed' ? { ...location, error } : location;
}

interface Search {
  request: LocateRequest;
  location?: Location;
  /** Next offset the scan reads, and the first offset with ts >= T it started from. */
  cursor?: number;
  timestampOffset?: number;
  scanned: number;
  /** Set while the scan starts from a bisection's landing point rather than the timestamp offset. */
  guided?: boolean;
  /** The scan from the bisection's landing point reached the log end without a match. */
  guidedReachedEnd?: boolean;
}

function requestKey(r: LocateRequest): string {
  return `${r.role}\u0000${r.anchor.offset}\u0000${r.anchor.fingerprint}\u0000${partitionKey(r.topic, r.partition)}`;
}

export class AnchorLocator {
  /** Found counterparts by request key; Map order makes the first key the least recently used. */
  private readonly found = new Map<string, Location>();
  hits = 0;

  constructor(
    private readonly reader: Reader,
    private readonly options: LocatorOptions,
  ) {}

  /**
   * Locations in request order, and the bounds of every partition that could be read. Many groups at the
   * same position ask the same question: it is asked once, and a found answer is remembered.
   */
  async locate(
    requests: readonly LocateRequest[],
  ): Promise<{ locations: Location[]; bounds: Map<string, TargetBounds> }> {
    const unique = new Map<string, LocateRequest>();
    const answers = new Map<string, Location>();
    for (const request of requests) {
      const key = requestKey(request);
      const cached = this.found.get(key);
      if (cached !== undefined) {
        this.hits += 1;
        this.found.delete(key);
        this.found.set(key, cached);
        answers.set(key, cached);
      } else {
        unique.set(key, request);
      }
    }
    const { locations, bounds } = await this.locateUncached([...unique.values()]);
    [...unique.keys()].forEach((key, i) => {
      const location = locations[i]!;
      answers.set(key, location);
      if (location.kind === 'found') {
        this.found.set(key, location);
        if (this.found.size > this.options.cacheSize) this.found.delete(this.found.keys().next().value!);
      }
    });
    return { locations: requests.map((r) => answers.get(requestKey(r))!), bounds };
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

  private async locateUncached(
    requests: readonly LocateRequest[],
  ): Promise<{ locations: Location[]; bounds: Map<string, TargetBounds> }> {
    const bounds = new Map<string, TargetBounds>();
    const searches: Search[] = requests.map((request) => ({ request, scanned: 0 }));
    if (searches.length === 0) return { locations: [], bounds };

    // Bounds of every partition: the log start (for the clamp) and the high watermark (the probe's limit).
    const partitions = [...new Map(requests.map((r) => [partitionKey(r.topic, r.partition), r])).values()];
    const answers = await this.reader.partitionBounds(partitions);
    const boundErrors = new Map<string, OffsetSyncError>();
    partitions.forEach((r, i) => {
      const answer = answers[i];
      if (answer === undefined) return;
      if ('highWatermark' in answer) bounds.set(partitionKey(r.topic, r.partition), answer);
      else boundErrors.set(partitionKey(r.topic, r.partition), answer);
    });
    for (const search of searches) {
      const error = boundErrors.get(partitionKey(search.request.topic, search.request.partition));
      if (error) search.location = locationOf(error);
    }

    await this.probe(
      searches.filter((s) => s.location === undefined && s.request.delta !== undefined),
      bounds,
    );
    await this.timestampLookup(searches.filter((s) => s.location === undefined));
    await this.bisect(
      searches.filter((s) => {
        const end = bounds.get(partitionKey(s.request.topic, s.request.partition))?.highWatermark;
        return (
          s.location === undefined &&
          s.cursor !== undefined &&
          end !== undefined &&
          end - s.cursor > 4 * this.options.probeWindow
        );
      }),
      bounds,
    );
    for (let round = 0; round < MAX_SCAN_ROUNDS; round++) {
      const scanning = searches.filter((s) => s.location === undefined);
      if (scanning.length === 0) break;
      await this.scan(scanning);
    }
    return {
      locations: searches.map(
        (s) =>
          s.location ?? {
            kind: 'window-exhausted',
            fallbackOffset: s.timestampOffset ?? 0,
            detail: 'scan rounds ran out',
          },
      ),
      bounds,
    };
  }

  private async probe(searches: Search[], bounds: Map<string, TargetBounds>): Promise<void> {
    const probes = searches.flatMap((search) => {
      const { topic, partition, anchor, delta } = search.request;
      const limits = bounds.get(partitionKey(topic, partition));
      if (limits === undefined || delta === undefined) return [];
      const guess = anchor.offset + delta;
      const from = Math.max(limits.logStartOffset, guess - this.options.probeWindow);
      if (from >= limits.highWatermark) return [];
      return [{ search, guess, from }];
    });
    if (probes.length === 0) return;
    const answers = await this.reader.fetchRecords(
      probes.map((p) => ({
        topic: p.search.request.topic,
        partition: p.search.request.partition,
        offset: p.from,
        // The probe looks at 2 x probeWindow + 1 records; the default megabyte read (and decoded) up to
        // the rest of the partition. A window not covered by this read is a miss, and the timestamp
        // lookup follows: slower, never wrong.
        maxBytes: PROBE_BYTES,
      })),
    );
    probes.forEach(({ search, guess }, i) => {
      const answer = answers[i];
      if (answer === undefined || answer.error) return;
      const window = answer.records.filter((r) => r.offset <= guess + this.options.probeWindow);
      if (this.refuseLogAppendTime(search, window)) return;
      const offset = pickMatch(window, search.request.anchor, search.request.role, guess);
      if (offset !== undefined) search.location = { kind: 'found', offset, method: 'delta-probe' };
    });
  }

  private async timestampLookup(searches: Search[]): Promise<void> {
    if (searches.length === 0) return;
    const answers = await this.reader.listOffsets(
      searches.map((s) => ({
        topic: s.request.topic,
        partition: s.request.partition,
        timestamp: s.request.anchor.timestampMs,
      })),
    );
    searches.forEach((search, i) => {
      const answer = answers[i];
      if (answer === undefined) return;
      if (answer.error) {
        search.location = locationOf(answer.error);
      } else if (answer.offset < 0) {
        // The broker's -1: no record with a timestamp >= T. The record has not been replicated yet.
        search.location = {
          kind: 'not-arrived',
          detail: `no record with timestamp >= ${search.request.anchor.timestampMs} on the target yet`,
        };
      } else {
        search.timestampOffset = answer.offset;
        search.cursor = answer.offset;
      }
    });
  }

  /**
   * The timestamp lookup lands on the first offset whose running maximum timestamp reaches T, so one record
   * stamped far ahead makes every lookup below it land early, possibly more records back than a scan may
   * read. Timestamps are mostly in order, so bisecting the offsets between that landing and the log end on
   * "timestamp >= T" finds the neighbourhood of the counterpart in a few reads. The scan then starts a little
   * before that point; if it finds nothing there, it starts over from the timestamp offset, so a misleading
   * bisection costs time, never a wrong answer.
   */
  private async bisect(searches: Search[], bounds: Map<string, TargetBounds>): Promise<void> {
    const ranges = new Map<Search, { lo: number; hi: number }>();
    for (const search of searches) {
      const end = bounds.get(partitionKey(search.request.topic, search.request.partition))?.highWatermark;
      if (end !== undefined && search.cursor !== undefined)
        ranges.set(search, { lo: search.cursor, hi: end });
    }
    for (let round = 0; round < 40; round++) {
      const open = [...ranges.entries()].filter(([, r]) => r.hi - r.lo > this.options.probeWindow);
      if (open.length === 0) break;
      const mids = open.map(([, r]) => Math.floor((r.lo + r.hi) / 2));
      const answers = await this.reader.fetchRecords(
        open.map(([search], i) => ({
          topic: search.request.topic,
          partition: search.request.partition,
          offset: mids[i]!,
          maxBytes: 1024,
        })),
      );
      open.forEach(([search, range], i) => {
        const answer = answers[i];
        const first = answer?.error ? undefined : answer?.records[0];
        if (first === undefined || first.timestampMs >= search.request.anchor.timestampMs)
          range.hi = mids[i]!;
        else range.lo = first.offset + 1;
      });
    }
    for (const [search, range] of ranges) {
      const start = Math.max(search.cursor ?? 0, range.lo - 2 * this.options.probeWindow);
      if (start > (search.cursor ?? 0)) {
        search.cursor = start;
        search.guided = true;
      }
    }
  }

  private async scan(searches: Search[]): Promise<void> {
    const answers: FetchAnswer[] = await this.reader.fetchRecords(
      searches.map((s) => ({
        topic: s.request.topic,
        partition: s.request.partition,
        offset: s.cursor ?? 0,
      })),
    );
    searches.forEach((search, i) => {
      const answer = answers[i];
      if (answer === undefined) return;
      if (answer.error) {
        search.location = locationOf(answer.error);
        return;
      }
      const budget = this.options.scanLimit - search.scanned;
      const records = answer.records.slice(0, budget);
      if (this.refuseLogAppendTime(search, records)) return;
      const offset = pickMatch(records, search.request.anchor, search.request.role);
      if (offset !== undefined) {
        search.location = { kind: 'found', offset, method: 'timestamp-scan' };
        return;
      }
      search.scanned += records.length;
      const end = answer.lastStableOffset >= 0 ? answer.lastStableOffset : answer.highWatermark;
      const reachedEnd = answer.nextOffset >= end && records.length === answer.records.length;
      if (search.guided === true && (reachedEnd || search.scanned >= this.options.scanLimit)) {
        // Not found after the bisection's landing point: scan from the timestamp offset after all, in case
        // the bisection was misled by out-of-order timestamps.
        search.guidedReachedEnd = reachedEnd;
        search.guided = false;
        search.scanned = 0;
        search.cursor = search.timestampOffset ?? 0;
        return;
      }
      if (reachedEnd) {
        search.location = {
          kind: 'not-arrived',
          detail: `scanned to the target log end (${end}) from offset ${search.timestampOffset ?? 0} without a match`,
          ...(search.timestampOffset === undefined ? {} : { fallbackOffset: search.timestampOffset }),
        };
        return;
      }
      if (search.scanned >= this.options.scanLimit && search.guidedReachedEnd === true) {
        // Neither scan found it, and the one from where timestamps say it belongs ran to the log end: most
        // likely it has not arrived yet. Wait rather than fall back to an offset far before it.
        search.location = {
          kind: 'not-arrived',
          detail: `not found after the timestamp bisection up to the log end (${end}), nor within ${this.options.scanLimit} records of the timestamp offset ${search.timestampOffset ?? 0}`,
          ...(search.timestampOffset === undefined ? {} : { fallbackOffset: search.timestampOffset }),
        };
        return;
      }
      if (search.scanned >= this.options.scanLimit) {
        search.location = {
          kind: 'window-exhausted',
          fallbackOffset: search.timestampOffset ?? 0,
          detail: `no match within ${this.options.scanLimit} records after the timestamp lookup`,
        };
        return;
      }
      search.cursor = Math.max(answer.nextOffset, (search.cursor ?? 0) + 1);
    });
  }

  private refuseLogAppendTime(search: Search, records: readonly FetchedRecord[]): boolean {
    if (!records.some((r) => r.timestampType === 'log-append-time')) return false;
    search.location = {
      kind: 'log-append-time',
      detail: 'the target topic uses LogAppendTime: its timestamps were rewritten by the target broker',
    };
    return true;
  }
}
