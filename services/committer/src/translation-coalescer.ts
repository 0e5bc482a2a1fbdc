// Within one batch only the newest translation per key is worth committing; the older ones are reported
// as stale. Newest: the latest version, and of one version the latest target offset (a translation is
// only revised forward). The survivors are grouped per consumer group, because the target takes one OffsetCommit per
// group. Pure.
import { compareVersions, type Version } from '@offsetsync/contracts';

/** The identity and version of one translation in a batch. */
export interface Keyed {
  /** The applied-versions KV key (link + group partition). */
  key: string;
  group: string;
  version: Version;
  translation: { targetOffset: number };
}

/** Negative when `a` is older than `b`: by version, then by target offset. Pure. */
function compareKeyed(a: Keyed, b: Keyed): number {
  return compareVersions(a.version, b.version) || a.translation.targetOffset - b.translation.targetOffset;
}

export interface Coalesced<T extends Keyed> {
  /** The newest translation of each key, in order of first appearance of the key. */
  newest: T[];
  /** Every other translation, with the one that superseded it. */
  superseded: { item: T; by: T }[];
}

/** Keeps the newest translation per key; of equal versions and offsets the first one seen. */
export function coalesceByKey<T extends Keyed>(items: readonly T[]): Coalesced<T> {
  const newestByKey = new Map<string, T>();
  for (const item of items) {
    const current = newestByKey.get(item.key);
    if (current === undefined || compareKeyed(item, current) > 0) newestByKey.set(item.key, item);
  }
  const superseded: { item: T; by: T }[] = [];
  for (const item of items) {
    const newest = newestByKey.get(item.key)!;
    if (newest !== item) superseded.push({ item, by: newest });
  }
  return { newest: [...newestByKey.values()], superseded };
}

/** Groups items by consumer group, keeping their order within each group. */
export function byGroup<T extends { group: string }>(items: readonly T[]): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const list = groups.get(item.group);
    if (list === undefined) groups.set(item.group, [item]);
    else list.push(item);
  }
  return groups;
}
