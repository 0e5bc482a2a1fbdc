// Where a consumer group resumes on the target, decided from a window of target records around the copies
// of its two anchors: the last record it consumed (L) and the next record (N). Pure.
//
// At-least-once replicators write runs of records twice: right after the first copy (a producer retry, a
// task restart) or later (a copier resuming from an older checkpoint, a retried batch landing after the
// next one). "Exact" means the group reads no copy of a record it consumed and misses no record it has not:
// it resumes after the *last* copy of L, provided every record it has not consumed is copied again after
// that point. Replication keeps order, so the first copies of records appear in source order; a later copy
// of L is taken only when the window shows it to be part of a rewrite:
//   - the records right before it repeat the records right before L's first copy (the rewritten consumed
//     part of the run), and
//   - N follows it, and every other record between L's first copy and it (the records the group has not
//     consumed) appears again after it, in the window.
// Otherwise the group resumes right after L's first copy, the earliest offset that never skips, and the
// answer is INEXACT when copies of consumed records follow (a consumer starting there reads them again).
//
// A source partition that itself holds a repeated sequence of records with the same keys, values and
// timestamps cannot be told apart from a replicator's duplicated run; a single identical record (a
// heartbeat, a tombstone, a retried send) can: it is not followed by a repeat of the records around it.
import type { Anchor } from '@offsetsync/contracts';
import { identityClasses, previousIdentical, recordFingerprint, type FetchedRecord } from '@offsetsync/kafka';

/** What the resolver decided. `counterpart` is the copy of the anchor the offset was derived from. */
export type ResumePoint =
  | {
      kind: 'exact';
      /** The offset to commit on the target. */
      offset: number;
      /** The target offset of the first copy of the anchor the offset follows from (for learning). */
      firstCopy: number;
      role: 'next' | 'last';
      detail: string;
    }
  | { kind: 'inexact'; offset: number; firstCopy: number; role: 'next' | 'last'; detail: string }
  /** No copy of either anchor in the window (at or after the floor). */
  | { kind: 'no-match' };

export interface ResumeWindow {
  /** Target data records in offset order, read without a hole from `records[0]` on. */
  records: readonly FetchedRecord[];
  /**
   * Index of the first record that can be a copy of an anchor: the window may start earlier, so that the
   * consumed records right before the first copies are seen (a rewrite of them is recognised). Records
   * before it that match an anchor are other, identical records.
   */
  floorIndex: number;
  next?: Anchor | undefined;
  last?: Anchor | undefined;
  /**
   * How far apart copies are looked for: the window holds at least twice this many records after the
   * first copy of an anchor (or reaches the partition's end), and nothing within this many records of a
   * truncated log start is taken for a first copy.
   */
  settleRecords: number;
  /** The window reaches the partition's end: a record not in it has not been copied yet. */
  reachesEnd: boolean;
  /**
   * How many source records on each side of the commit the collector saw to be distinct (the event's
   * distinct_around). A later copy of L is taken for a rewrite only when every record the decision
   * compares lies within that distance: otherwise an identical record could pass for a copy.
   */
  distinctAround: number;
  /**
   * The target partition's log start. Retention or DeleteRecords may have removed the first copy of a
   * record and left a later one, which then looks like a first copy: close to the log start, nothing is
   * taken for a first copy.
   */
  logStart: number;
}

/** Whether the record is a copy of the anchor: the timestamp first, the digest only when it matches. */
export function isCopyOf(record: FetchedRecord, anchor: Anchor | undefined): boolean {
  return (
    anchor !== undefined &&
    record.timestampMs === anchor.timestampMs &&
    recordFingerprint(record.key, record.value) === anchor.fingerprint
  );
}

/** One number per record of the window, equal exactly for records with the same timestamp, key and value. */
function identities(records: readonly FetchedRecord[]): Int32Array {
  return identityClasses(
    previousIdentical(records.length, {
      timestampMs: (i) => records[i]!.timestampMs,
      contentKey: (i) => recordFingerprint(records[i]!.key, records[i]!.value),
    }),
  );
}

/** Length of the common suffix of records[..a] and records[..b] (a > b), not reaching back past b. */
function commonSuffix(ids: Int32Array, a: number, b: number): number {
  let k = 0;
  while (a - k > b && b - k >= 0 && ids[a - k] === ids[b - k]) k += 1;
  return k;
}

/**
 * Whether the copy of L at index `lj` (after the first copy at `l1`) ends a rewrite that the group can
 * resume after: N follows it, and every record between `l1` and it that is not part of a rewrite of the
 * consumed records ending at L appears again after it.
 */
function resumableAfter(
  ids: Int32Array,
  lCopies: readonly number[],
  j: number,
  nextId: number | undefined,
  reachesEnd: boolean,
): boolean {
  const l1 = lCopies[0]!;
  const lj = lCopies[j]!;
  // N follows the copy, or nothing does yet (N has not been copied again so far).
  const nothingAfter = lj === ids.length - 1 && reachesEnd;
  if (nextId !== undefined && ids[lj + 1] !== nextId && !nothingAfter) return false;
  // The rewrites: each later copy of L with the records before it that repeat the records before L's
  // first copy (consumed), and, for the copies before `lj`, the records after it that repeat the records
  // after L's first copy (copies of records already counted).
  const rewritten = new Set<number>();
  for (const li of lCopies.slice(1, j + 1)) {
    const k = commonSuffix(ids, li, l1);
    for (let i = li - k + 1; i <= li; i++) rewritten.add(i);
    if (li === lj) continue;
    for (let m = 1; li + m < lj && ids[li + m] === ids[l1 + m]; m++) rewritten.add(li + m);
  }
  // Counted, not just looked up: two identical records need two copies.
  const available = new Map<number, number>();
  for (let i = lj + 1; i < ids.length; i++) available.set(ids[i]!, (available.get(ids[i]!) ?? 0) + 1);
  for (let i = l1 + 1; i < lj; i++) {
    if (rewritten.has(i)) continue;
    const left = available.get(ids[i]!) ?? 0;
    if (left === 0) return false;
    available.set(ids[i]!, left - 1);
  }
  return true;
}

/** Whether the record at `i` (after `upTo`) repeats a record at or before `upTo`. */
function repeatsUpTo(ids: Int32Array, i: number, upTo: number): boolean {
  // A record's identity is the index of the first of its copies in the window.
  return ids[i]! <= upTo;
}

/** Offsets of the records from `from` (after `upTo`) to the end of the window that repeat a record at or before `upTo`. */
function consumedCopiesAfter(
  ids: Int32Array,
  records: readonly FetchedRecord[],
  upTo: number,
  from: number,
): number[] {
  const found: number[] = [];
  for (let i = from; i < ids.length; i++) if (repeatsUpTo(ids, i, upTo)) found.push(records[i]!.offset);
  return found;
}

function offsetsText(offsets: readonly number[]): string {
  const shown = offsets.slice(0, 5).join(', ');
  return offsets.length > 5 ? `${shown} and ${offsets.length - 5} more` : shown;
}

/** Where the group resumes, from the window. Pure. */
export function resumePoint(window: ResumeWindow): ResumePoint {
  const { records, floorIndex, next, last, settleRecords, reachesEnd } = window;
  const ids = identities(records);
  const copies = (anchor: Anchor | undefined): number[] => {
    const found: number[] = [];
    if (anchor === undefined) return found;
    for (let i = Math.max(0, floorIndex); i < records.length; i++)
      if (isCopyOf(records[i]!, anchor)) found.push(i);
    return found;
  };
  const nCopies = copies(next);
  const lCopies = copies(last);
  // What a copy of N looks like in `ids`: undefined without an N; an identity no record has when N has no copy.
  const nextId = next === undefined ? undefined : nCopies.length === 0 ? -1 : ids[nCopies[0]!];
  if (nCopies.length === 0 && lCopies.length === 0) return { kind: 'no-match' };

  const firstMatch = Math.min(nCopies[0] ?? Infinity, lCopies[0] ?? Infinity);
  const logStart = window.logStart;
  if (logStart > 0 && records[firstMatch]!.offset - logStart < settleRecords) {
    return {
      kind: 'inexact',
      offset: logStart,
      firstCopy: records[firstMatch]!.offset,
      role: nCopies[0] === firstMatch ? 'next' : 'last',
      detail:
        `the copies of the anchors are within ${settleRecords} records of the target's log start ` +
        `(${logStart}), which may have removed earlier copies: the group starts at the log start`,
    };
  }

  if (
    next !== undefined &&
    last !== undefined &&
    next.timestampMs === last.timestampMs &&
    next.fingerprint === last.fingerprint
  ) {
    const first = records[nCopies[0]!]!.offset;
    return {
      kind: 'inexact',
      offset: first,
      firstCopy: first,
      role: 'next',
      detail:
        'the next record and the last consumed one have the same key, value and timestamp: their copies ' +
        'cannot be told apart, so the group starts at the first of them',
    };
  }

  if (lCopies.length === 0) {
    // L is not on the target (below its log start, or not copied): N's first copy, with nothing consumed
    // known to follow it.
    const n1 = nCopies[0]!;
    return {
      kind: 'exact',
      offset: records[n1]!.offset,
      firstCopy: records[n1]!.offset,
      role: 'next',
      detail: '',
    };
  }

  const l1 = lCopies[0]!;
  const firstL = records[l1]!.offset;
  if (nCopies.length > 0 && nCopies[0]! < l1) {
    const n1 = records[nCopies[0]!]!.offset;
    return {
      kind: 'inexact',
      offset: n1,
      firstCopy: n1,
      role: 'next',
      detail: `a copy of the next record (at ${n1}) precedes the first copy of the last consumed one (at ${firstL}): the replicator reordered records`,
    };
  }

  for (let j = lCopies.length - 1; j >= 1; j--) {
    // The decision compares the records from the rewrite's start before L to a copy of the rest after
    // it: about 2 x (lj - l1) source records around the commit, which must all be distinct.
    if (2 * (lCopies[j]! - l1) > window.distinctAround) continue;
    if (!resumableAfter(ids, lCopies, j, nextId, reachesEnd)) continue;
    const lj = lCopies[j]!;
    const replayed = consumedCopiesAfter(ids, records, l1, lj + 1);
    if (replayed.length > 0) break;
    return {
      kind: 'exact',
      offset: records[lj]!.offset + 1,
      firstCopy: firstL,
      role: 'last',
      detail: `after the last of ${j + 1} copies of the last consumed record (a run written twice)`,
    };
  }

  // Right after the first copy of L, skipping the copies of consumed records that follow it before N's
  // first copy (replication keeps order: nothing the group has not consumed is copied before N).
  const n1 = nCopies.find((i) => i > l1);
  let p = l1 + 1;
  while (p < records.length && p !== n1 && repeatsUpTo(ids, p, l1)) p += 1;
  const offset = p < records.length ? records[p]!.offset : records[records.length - 1]!.offset + 1;
  const replayed = consumedCopiesAfter(ids, records, l1, p);
  if (replayed.length > 0) {
    return {
      kind: 'inexact',
      offset,
      firstCopy: firstL,
      role: 'last',
      detail:
        `records the group consumed are copied again after ${offset} (at ${offsetsText(replayed)}) and ` +
        'what follows them is not a complete copy of the rest: starting later could skip records, so the ' +
        'group reads those copies again',
    };
  }
  const skipped = p - (l1 + 1);
  return {
    kind: 'exact',
    offset,
    firstCopy: firstL,
    role: 'last',
    detail:
      skipped === 0 ? '' : `after ${skipped} copies of consumed records that follow the last consumed one`,
  };
}
