// Which records of a run read from one partition are identical: the same timestamp, key and value. The
// collector and the translator both ask it for hundreds of records around every commit, so the content is
// looked at only for records that share a timestamp with another one; most records do not. Pure.

/** What is needed of each record: its timestamp, and its content's fingerprint when asked for. */
export interface IdentityProbe {
  timestampMs(index: number): number;
  /** Called only for records that share a timestamp with another record of the run. */
  contentKey(index: number): string;
}

/**
 * For each of `count` records, the index of the nearest earlier record identical to it, or -1 when there
 * is none. `classOf(previous)` turns the answer into one number per record that is equal exactly for
 * identical records.
 */
export function previousIdentical(count: number, probe: IdentityProbe): Int32Array {
  const previous = new Int32Array(count).fill(-1);
  // Most runs are stamped in increasing order (one producer): no two records share a timestamp.
  let increasing = true;
  for (let i = 1; i < count && increasing; i++) increasing = probe.timestampMs(i) > probe.timestampMs(i - 1);
  if (increasing) return previous;
  const withTimestamp = new Map<number, number>();
  for (let i = 0; i < count; i++) {
    const t = probe.timestampMs(i);
    withTimestamp.set(t, (withTimestamp.get(t) ?? 0) + 1);
  }
  if (withTimestamp.size === count) return previous;
  // Only the records that share a timestamp: by timestamp and content, nearest earlier first.
  const lastWithContent = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const t = probe.timestampMs(i);
    if (withTimestamp.get(t)! < 2) continue;
    const key = `${t}\u0000${probe.contentKey(i)}`;
    const before = lastWithContent.get(key);
    if (before !== undefined) previous[i] = before;
    lastWithContent.set(key, i);
  }
  return previous;
}

/** One number per record, equal exactly for identical records: the index of the first of them. */
export function identityClasses(previous: Int32Array): Int32Array {
  const classes = new Int32Array(previous.length);
  for (let i = 0; i < previous.length; i++) {
    const p = previous[i]!;
    classes[i] = p < 0 ? i : classes[p]!;
  }
  return classes;
}
