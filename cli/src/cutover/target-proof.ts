// Proves a cutover on the target itself, per partition: given the source records around the group's
// committed source offset c and the target records around its committed target offset t, is t the exact
// place to resume? Pure: the reads are in target-proof-reads.ts, so every answer is unit-tested.
//
// The replication model (what MirrorMaker 2, the test replicator and other at-least-once copiers do):
// records are copied in source order, none is dropped, and after a restart a run of already copied
// records may be written again (a duplicate run). Other producers may add records of their own to the
// target topic. A record's identity across clusters is its timestamp and the fingerprint of key and value
// (the collector's anchors); two distinct source records may share it (heartbeats, retried sends).
//
// "Exact" is the design's invariant 6: a consumer at t reads no copy of a record it consumed and misses
// none it did not. The check looks at N records on each side (the proof window):
//   L = the last N data records before c (consumed), U = the first N from c (not consumed),
//   B = the last N target records before t, A = the first N target records from t.
// 1. Next record: the first record of A is a counterpart of the first of U (the record at c). When the
//    group consumed everything (U empty) there is no next record; then the record before t is a
//    counterpart of the last consumed one (t right after its copy). The target's log end alone is not
//    enough: a replicator that is behind would still append copies of consumed records after t.
// 2. No replay within the window: no record of A is a copy of a consumed record. A record of A that
//    matches a consumed record and no unconsumed one is such a copy (REPLAY_ON_TARGET). Duplicates of
//    unconsumed records and records foreign to the source are harmless.
// 3. Identical records (equal timestamp and fingerprint, distinct source records): when the record at c
//    or the last consumed one is not unique among L+U, or a record of A equals both a consumed and an
//    unconsumed record, content alone cannot tell a copy from a replay or a skip. It is settled by
//    counting from records that occur once in L+U (distinct records): after the last copy of the last
//    distinct consumed record p the target holds exactly the records that follow p before c, each a
//    counterpart, up to t; and from t the target holds exactly the counterparts of the records from c up to
//    the first distinct record q past every record of A that looks like a consumed one. The replicator
//    never drops a record, so a duplicate or a replay inside either span would make the target's count
//    larger. When no distinct record bounds the run within the window, or a duplicate falls inside, it is
//    NOT_PROVEN (the design's "when copies cannot be told apart"), never guessed.
// Bounded: a replay further than N records after t, or of a record consumed more than N records before c,
// is not seen; cutover-help.ts and docs/operations.md say so.
import type { TopicPartition } from '@offsetsync/kafka';

/** Default and upper limit of the proof window (records on each side of both offsets). */
export const PROOF_WINDOW_DEFAULT = 500;
export const PROOF_WINDOW_MAX = 10_000;

/** A data record as the proof compares it. */
export interface ProofRecord {
  offset: number;
  timestampMs: number;
  /** `recordFingerprint(key, value)`. */
  fingerprint: string;
}

/** What was read around the committed source offset. */
export interface SourceReading {
  committed: number;
  logStartOffset: number;
  logEndOffset: number;
  /** Up to the window's count of data records before `committed`, in offset order (the last ones). */
  consumed: readonly ProofRecord[];
  /** Up to the window's count of data records from `committed` on, in offset order. */
  unconsumed: readonly ProofRecord[];
}

/** What was read around the committed target offset. */
export interface TargetReading {
  /** The group's committed offset on the target; undefined when it has none for the partition. */
  committed: number | undefined;
  logStartOffset: number;
  logEndOffset: number;
  /** Up to the window's count of data records before `committed`, in offset order (the last ones). */
  before: readonly ProofRecord[];
  /** Up to the window's count of data records from `committed` on, in offset order. */
  from: readonly ProofRecord[];
}

/** Why a partition is not proven. */
export type ProofFailure =
  | 'NO_TARGET_COMMIT'
  | 'TARGET_TRUNCATED'
  | 'TARGET_PAST_END'
  | 'NEXT_RECORD_NOT_ON_TARGET'
  | 'NEXT_RECORD_MISMATCH'
  | 'LAST_CONSUMED_MISMATCH'
  | 'REPLAY'
  | 'IDENTICAL_RECORDS_AMBIGUOUS'
  | 'NOTHING_TO_COMPARE'
  /** The target could not be read; set by the reads (target-proof-reads.ts), not by {@link proveOnTarget}. */
  | 'UNREADABLE'
  /** The source's records could not be read; set by the reads. */
  | 'SOURCE_UNREADABLE';

/**
 * The next-record check: `match` (the record at t is the counterpart of the record at c), `mismatch`,
 * `not-on-target` (no record at or after t yet), `none` (the group consumed everything: there is no
 * next record), `not-checked` (the proof stopped before it).
 */
type NextRecordCheck = 'match' | 'mismatch' | 'not-on-target' | 'none' | 'not-checked';

/** What was checked for one partition, as `cutover --json` reports it. */
export interface PartitionProof {
  /** `topic-partition`. */
  partition: string;
  sourceOffset: number;
  targetOffset: number | null;
  nextRecord: NextRecordCheck;
  /** Target records from t on that were compared (at most the window). */
  examined: number;
  /** Records among them that are copies of records the group consumed on the source. */
  consumedCopies: number;
  /** Contents that occur both among the consumed and the unconsumed source records (identical records). */
  identicalAcrossCommit: number;
  proven: boolean;
  /** Why not proven; null when proven. */
  failure: ProofFailure | null;
  /** In words: what was proven, or why not. */
  message: string;
}

export interface ProofInput extends TopicPartition {
  source: SourceReading;
  target: TargetReading;
}

const identity = (r: ProofRecord): string => `${r.timestampMs}/${r.fingerprint}`;

function counts(records: readonly ProofRecord[]): Map<string, number> {
  const result = new Map<string, number>();
  for (const r of records) result.set(identity(r), (result.get(identity(r)) ?? 0) + 1);
  return result;
}

/**
 * Check 3, for identical records: pins t by counting between records whose content occurs once among
 * the source records read (distinct records). Before t: the target holds, after the last copy of the last
 * distinct consumed record p, exactly the records that follow p before c, each a counterpart. From t: the
 * target records up to the copy of the first distinct unconsumed record q past every record that looks
 * like a consumed one are counterparts of the source's from c, one for one. The replicator never drops a
 * record, so a duplicate or a replay inside either span would make the target's count larger. Returns
 * why not, or undefined when that holds.
 */
function identicalRecordsSettled(
  source: SourceReading,
  target: TargetReading,
  c: number,
  t: number,
): string | undefined {
  const { consumed: L, unconsumed: U } = source;
  const { before: B, from: A } = target;
  const everywhere = counts([...L, ...U]);
  const distinct = (r: ProofRecord) => everywhere.get(identity(r)) === 1;
  const ambiguity = `identical records around source offset ${c}`;
  if (L.length > 0) {
    const p = L.findLastIndex(distinct);
    if (p < 0) {
      return `${ambiguity} fill the ${L.length} consumed records read: a copy on the target cannot be told from a replay`;
    }
    const anchor = identity(L[p]!);
    const onTarget = B.findLastIndex((r) => identity(r) === anchor);
    const tail = onTarget < 0 ? [] : B.slice(onTarget + 1);
    const expected = L.slice(p + 1);
    if (U.length === 0 && expected.length > 0) {
      // Nothing follows on the source to pin the count: a replicator's rewrite that has just begun again
      // (a duplicate of an earlier record) looks like the last consumed records, which are not distinct.
      return (
        `${ambiguity}: the last ${expected.length} consumed record(s) are identical to others and no ` +
        'record follows them on the source, so a copy on the target cannot be told from a rewrite'
      );
    }
    if (
      onTarget < 0 ||
      tail.length !== expected.length ||
      tail.some((r, i) => identity(r) !== identity(expected[i]!))
    ) {
      return (
        `${ambiguity}: the target does not hold exactly the ${expected.length} record(s) that follow source ` +
        `offset ${L[p]!.offset} before target offset ${t}`
      );
    }
  } else {
    const unconsumedIds = counts(U);
    const early = B.find((r) => unconsumedIds.has(identity(r)));
    if (early !== undefined) {
      return `${ambiguity}: target offset ${early.offset}, before ${t}, may be the copy of an unconsumed record`;
    }
  }
  if (U.length === 0) return undefined;
  const consumedIds = counts(L);
  const lastLikeConsumed = A.findLastIndex((r) => consumedIds.has(identity(r)));
  const q = U.findIndex((r, i) => i > lastLikeConsumed && distinct(r));
  if (q < 0 || q >= A.length) {
    return (
      `${ambiguity}: no distinct record follows them within the records read ` +
      `(${A.length} on the target, ${U.length} on the source), so copies cannot be told from replays`
    );
  }
  const differs = A.slice(0, q + 1).findIndex((r, i) => identity(r) !== identity(U[i]!));
  if (differs >= 0) {
    return (
      `${ambiguity}: target offset ${A[differs]!.offset} is not the counterpart of source offset ` +
      `${U[differs]!.offset}, so copies cannot be told from replays`
    );
  }
  return undefined;
}

/** Whether the committed target offset is proven exact for one partition; see the file comment. */
export function proveOnTarget(input: ProofInput): PartitionProof {
  const partition = `${input.topic}-${input.partition}`;
  const { source, target } = input;
  const c = source.committed;
  const base = {
    partition,
    sourceOffset: c,
    targetOffset: target.committed ?? null,
    nextRecord: 'not-checked' as NextRecordCheck,
    examined: 0,
    consumedCopies: 0,
    identicalAcrossCommit: 0,
  };
  const refuse = (
    failure: ProofFailure,
    message: string,
    over: Partial<PartitionProof> = {},
  ): PartitionProof => ({ ...base, ...over, proven: false, failure, message: `${partition}: ${message}` });

  const t = target.committed;
  if (t === undefined || t < 0) {
    return refuse('NO_TARGET_COMMIT', 'the group has no committed offset for it on the target');
  }
  if (t < target.logStartOffset) {
    return refuse(
      'TARGET_TRUNCATED',
      `the committed target offset ${t} is below the target's log start ${target.logStartOffset}: ` +
        'those records are gone and a consumer would be reset by auto.offset.reset',
    );
  }
  if (t > target.logEndOffset) {
    return refuse(
      'TARGET_PAST_END',
      `the committed target offset ${t} is past the target's log end ${target.logEndOffset}`,
    );
  }

  const { consumed: L, unconsumed: U } = source;
  const { before: B, from: A } = target;
  const consumedIds = counts(L);
  const unconsumedIds = counts(U);
  const identical = [...consumedIds.keys()].filter((id) => unconsumedIds.has(id)).length;
  const copies = A.filter((r) => consumedIds.has(identity(r)) && !unconsumedIds.has(identity(r)));
  const nextRecord: NextRecordCheck =
    U.length === 0
      ? 'none'
      : A.length === 0
        ? 'not-on-target'
        : identity(A[0]!) === identity(U[0]!)
          ? 'match'
          : 'mismatch';
  const checked = {
    nextRecord,
    examined: A.length,
    consumedCopies: copies.length,
    identicalAcrossCommit: identical,
  };

  if (copies.length > 0) {
    return refuse(
      'REPLAY',
      `${copies.length} of the ${A.length} target records from offset ${t} on are copies of records the ` +
        `group already consumed on the source (the first at target offset ${copies[0]!.offset}): a consumer ` +
        'there would replay them',
      checked,
    );
  }
  if (nextRecord === 'not-on-target') {
    return refuse(
      'NEXT_RECORD_NOT_ON_TARGET',
      `the record at source offset ${U[0]!.offset} has no counterpart at or after target offset ${t} yet`,
      checked,
    );
  }
  if (nextRecord === 'mismatch') {
    return refuse(
      'NEXT_RECORD_MISMATCH',
      `the record at target offset ${A[0]!.offset} is not the counterpart of the next source record ` +
        `(offset ${U[0]!.offset}): a consumer there would replay or skip records`,
      checked,
    );
  }
  if (nextRecord === 'none') {
    const last = L.at(-1);
    if (last === undefined) {
      // Nothing consumed is left on the source to compare with, and nothing follows c. A source partition
      // that never held a record has nothing a target record could be a copy of.
      if (A.length > 0 && source.logEndOffset > 0) {
        return refuse(
          'NOTHING_TO_COMPARE',
          `the source holds no record around offset ${c} to compare with, and the target has ` +
            `${A.length} record(s) from offset ${t} on`,
          checked,
        );
      }
    } else if (B.length === 0 || identity(B.at(-1)!) !== identity(last)) {
      return refuse(
        'LAST_CONSUMED_MISMATCH',
        `the group consumed everything on the source, but the record before target offset ${t} ` +
          `${B.length === 0 ? '(none)' : `(offset ${B.at(-1)!.offset})`} is not the counterpart of the ` +
          `last consumed record (source offset ${last.offset})`,
        checked,
      );
    }
  }
  const everywhere = counts([...L, ...U]);
  const repeated = (r: ProofRecord | undefined) => r !== undefined && (everywhere.get(identity(r)) ?? 0) > 1;
  const needsCounting =
    (identical > 0 && A.some((r) => consumedIds.has(identity(r)))) ||
    repeated(U[0]) ||
    (U.length === 0 && repeated(L.at(-1)));
  if (needsCounting) {
    const why = identicalRecordsSettled(source, target, c, t);
    if (why !== undefined) return refuse('IDENTICAL_RECORDS_AMBIGUOUS', why, checked);
  }
  const what =
    nextRecord === 'match'
      ? `target offset ${t} holds the counterpart of source offset ${U[0]!.offset}`
      : L.length > 0
        ? `target offset ${t} follows the counterpart of the last consumed record (source offset ${L.at(-1)!.offset})`
        : `nothing is consumed or left to consume around source offset ${c}`;
  return {
    ...base,
    ...checked,
    proven: true,
    failure: null,
    message: `${partition}: ${what}; none of the ${A.length} target record(s) from there is a copy of a consumed record`,
  };
}
