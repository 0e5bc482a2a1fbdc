// Target records the locator has read, kept across calls so that the many commits of one partition do not
// each read and decode the same window again. A record at an offset never changes while the topic exists
// and its partition keeps its leader: what can change it is the topic deleted and created again (a new
// topic id, possibly other records at the same offsets) or a leader change (an unclean election truncates
// the log and other records take the offsets). Retention and DeleteRecords only move the log start. So a
// run of records kept from an earlier call is used only after this call checked it: the topic must still
// have the id the run was read under, the run must lie within the partition's current bounds (the part
// below the log start is dropped), and the partition's leader must still be at the leader epoch the run
// was read under: a read from the run's end that names that epoch, which the leader answers only at its
// own epoch (the read also extends the run toward the log end). A run that saw a leader change goes whole,
// even a clean one (they are rare). Runs read in a call are good for that call. Memory is bounded by a
// byte budget over all partitions, least recently used first out.
import type { FetchAnswer, FetchedRecord, PartitionBounds } from '@offsetsync/kafka';

/** Records read without a hole: every data record with offset in [from, to), in offset order. */
interface Run {
  /** The topic id the records were read under. */
  topicId: string;
  /**
   * The partition's leader epoch when the run was started, as the call that started it read it before
   * reading the records: never later than the epoch the records were read at.
   */
  leaderEpoch: number;
  from: number;
  to: number;
  records: FetchedRecord[];
  bytes: number;
}

/** What a served read looks like: the records from an offset on, and where to read next. */
export interface ServedRead {
  records: FetchedRecord[];
  nextOffset: number;
}

/** The partitions whose runs were checked (or read) in one locate call. */
export type CheckedRuns = Set<string>;

/** A partition's identity as one call read it (Metadata): its topic id and its leader's epoch, if known. */
export interface PartitionIdentity {
  topicId: string | undefined;
  leaderEpoch: number | undefined;
}

/** The read that checks a kept run: from its end, naming the leader epoch it was read under. */
export interface RunCheck {
  offset: number;
  currentLeaderEpoch: number;
}

/** Rough memory of one decoded record: its key and value, and the objects around them. */
function recordBytes(record: FetchedRecord): number {
  return 160 + (record.key?.length ?? 0) + (record.value?.length ?? 0);
}

/** The index of the first record with offset >= `offset` (records.length when none). */
function firstAtOrAfter(records: readonly FetchedRecord[], offset: number): number {
  let lo = 0;
  let hi = records.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (records[mid]!.offset < offset) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function sum(records: readonly FetchedRecord[]): number {
  let bytes = 0;
  for (const r of records) bytes += recordBytes(r);
  return bytes;
}

export class TargetRecords {
  /** Runs by partition key; Map order makes the first key the least recently used. */
  private readonly runs = new Map<string, Run>();
  private bytes = 0;

  /**
   * @param budgetBytes what all runs may hold together (0 keeps nothing)
   * @param maxServed records one served read returns at most
   */
  constructor(
    private readonly budgetBytes: number,
    private readonly maxServed: number,
  ) {}

  /** Bytes held now (for tests and metrics). */
  get heldBytes(): number {
    return this.bytes;
  }

  /**
   * Fits the partition's run to its current bounds: the records below the log start go; a run of another
   * topic id or leader epoch, or that ends past the log end (the partition is shorter than it was), goes
   * whole. Returns the read that checks the run before it is used; undefined when there is nothing to check.
   */
  bound(key: string, bounds: PartitionBounds, identity: PartitionIdentity): RunCheck | undefined {
    const run = this.runs.get(key);
    if (run === undefined) return undefined;
    if (
      run.topicId !== identity.topicId ||
      run.leaderEpoch !== identity.leaderEpoch ||
      run.to > bounds.highWatermark ||
      run.to <= bounds.logStartOffset
    ) {
      this.drop(key);
      return undefined;
    }
    if (run.from < bounds.logStartOffset) {
      const cut = firstAtOrAfter(run.records, bounds.logStartOffset);
      const removed = run.records.splice(0, cut);
      this.resize(run, -sum(removed));
      run.from = bounds.logStartOffset;
    }
    if (run.records.length === 0) {
      this.drop(key);
      return undefined;
    }
    return { offset: run.to, currentLeaderEpoch: run.leaderEpoch };
  }

  /**
   * The answer to the run's check: the run is good for this call when the leader answered at the run's
   * epoch (and grows by the records after it); otherwise it goes.
   */
  confirm(key: string, answer: FetchAnswer | undefined, checked: CheckedRuns): void {
    const run = this.runs.get(key);
    if (run === undefined) return;
    if (
      answer === undefined ||
      answer.error !== undefined ||
      answer.leaderEpoch !== run.leaderEpoch ||
      answer.requestedOffset !== run.to
    ) {
      this.drop(key);
      return;
    }
    checked.add(key);
    this.absorb(key, answer, checked, { topicId: run.topicId, leaderEpoch: run.leaderEpoch });
  }

  /** The records from `offset` on, when a run checked in this call holds that offset. */
  serve(key: string, offset: number, checked: CheckedRuns): ServedRead | undefined {
    if (!checked.has(key)) return undefined;
    const run = this.runs.get(key);
    if (run === undefined || offset < run.from || offset >= run.to) return undefined;
    this.touch(key, run);
    const start = firstAtOrAfter(run.records, offset);
    const end = Math.min(run.records.length, start + this.maxServed);
    const records = run.records.slice(start, end);
    const nextOffset = end === run.records.length ? run.to : run.records[end]!.offset;
    return { records, nextOffset };
  }

  /** Whether a run checked in this call holds `offset`; its record there, if it has one. */
  recordAt(key: string, offset: number, checked: CheckedRuns): { held: boolean; record?: FetchedRecord } {
    const run = checked.has(key) ? this.runs.get(key) : undefined;
    if (run === undefined || offset < run.from || offset >= run.to) return { held: false };
    const record = run.records[firstAtOrAfter(run.records, offset)];
    return record?.offset === offset ? { held: true, record } : { held: true };
  }

  /**
   * Keeps what a read returned, under the partition's identity as this call read it before the read
   * (nothing without a topic id and a leader epoch): it extends a run checked in this call when it starts
   * within it or reaches it, and otherwise starts a new run for the partition (the old one goes).
   */
  absorb(key: string, answer: FetchAnswer, checked: CheckedRuns, identity: PartitionIdentity): void {
    const { topicId, leaderEpoch } = identity;
    if (this.budgetBytes === 0 || answer.error !== undefined) return;
    if (topicId === undefined || leaderEpoch === undefined) return;
    const from = answer.requestedOffset;
    const to = answer.nextOffset;
    if (to <= from) return;
    const fresh = answer.records.filter((r) => r.offset >= from && r.offset < to);
    const held = checked.has(key) ? this.runs.get(key) : undefined;
    const run = held?.topicId === topicId && held.leaderEpoch === leaderEpoch ? held : undefined;
    if (run !== undefined && from >= run.from && from <= run.to) {
      if (to > run.to) {
        const added = fresh.slice(firstAtOrAfter(fresh, run.to));
        for (const r of added) run.records.push(r);
        run.to = to;
        this.resize(run, sum(added));
      }
      this.touch(key, run);
    } else if (run !== undefined && from < run.from && to >= run.from) {
      const kept = run.records.slice(firstAtOrAfter(run.records, to));
      const merged = {
        topicId,
        leaderEpoch,
        from,
        to: Math.max(to, run.to),
        records: [...fresh, ...kept],
        bytes: 0,
      };
      this.replace(key, merged);
    } else {
      this.replace(key, { topicId, leaderEpoch, from, to, records: fresh, bytes: 0 });
    }
    checked.add(key);
    this.evict(key);
  }

  private replace(key: string, run: Run): void {
    this.drop(key);
    run.bytes = sum(run.records);
    this.bytes += run.bytes;
    this.runs.set(key, run);
  }

  private drop(key: string): void {
    const run = this.runs.get(key);
    if (run === undefined) return;
    this.bytes -= run.bytes;
    this.runs.delete(key);
  }

  private resize(run: Run, delta: number): void {
    run.bytes += delta;
    this.bytes += delta;
  }

  private touch(key: string, run: Run): void {
    this.runs.delete(key);
    this.runs.set(key, run);
  }

  /**
   * Back within the budget: other partitions' runs go first, least recently used first; a run larger than
   * half the budget loses its oldest records (commits gather near the log end).
   */
  private evict(current: string): void {
    const run = this.runs.get(current);
    if (run !== undefined && run.bytes > this.budgetBytes / 2) {
      let cut = 0;
      let freed = 0;
      while (cut < run.records.length - 1 && run.bytes - freed > this.budgetBytes / 4) {
        freed += recordBytes(run.records[cut]!);
        cut += 1;
      }
      run.records.splice(0, cut);
      this.resize(run, -freed);
      run.from = run.records[0]?.offset ?? run.to;
    }
    for (const key of this.runs.keys()) {
      if (this.bytes <= this.budgetBytes) break;
      if (key !== current) this.drop(key);
    }
    if (this.bytes > this.budgetBytes) this.drop(current);
  }
}
