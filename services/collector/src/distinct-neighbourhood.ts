// How far around a committed offset the source records are pairwise distinct (timestamp, key and value),
// counted in data records. The translator may take a later copy of an anchor on the target for a
// replicator's rewrite of a run only when no identical record could pass for that copy: this tells it how
// far that holds. Pure.
import { previousIdentical } from '@offsetsync/kafka';

/** What the check needs of a source data record. */
interface CheckedRecord {
  offset: number;
  timestampMs: number;
  /** Digest of the key and value bytes. */
  fingerprint: string;
}

/**
 * The largest n (at most `limit`) such that the n data records before `c` and the n data records from
 * `c` on are pairwise distinct. `records` are the data records read around `c`, in offset order and
 * without a hole; records past the end of the read were not there to check, so n never counts them.
 * When the read began at the log start, there is nothing before it that could be identical.
 */
export function distinctAround(
  records: readonly CheckedRecord[],
  c: number,
  limit: number,
  options: { fromLogStart: boolean },
): number {
  const at = records.findIndex((r) => r.offset >= c);
  const first = at < 0 ? records.length : at;
  const before = options.fromLogStart ? limit : first;
  let radius = Math.max(0, Math.min(limit, before, records.length - first));
  const previous = previousIdentical(records.length, {
    timestampMs: (i) => records[i]!.timestampMs,
    contentKey: (i) => records[i]!.fingerprint,
  });
  previous.forEach((i, j) => {
    // The pair (i, j) lies within n records of c once n >= max(first - i, j - first + 1).
    if (i >= 0) radius = Math.min(radius, Math.max(first - i, j - first + 1) - 1);
  });
  return Math.max(0, radius);
}
