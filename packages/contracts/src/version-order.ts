// The order of versions: a version is the position of a commit's record in the source's
// `__consumer_offsets` (one partition per group), so it orders the commits of one group totally.
import type { Version } from './gen/offsetsync/v1/events.js';

/**
 * Orders two versions of one group lexicographically on (offsets partition, offsets offset): negative when
 * `a` is older than `b`, zero when equal, positive when newer. A missing version is older than every
 * version (an event without one predates versions, or a key holds nothing yet); two missing ones are equal.
 */
export function compareVersions(a: Version | null | undefined, b: Version | null | undefined): number {
  if (!a || !b) return (a ? 1 : 0) - (b ? 1 : 0);
  if (a.offsetsPartition !== b.offsetsPartition) return a.offsetsPartition - b.offsetsPartition;
  return a.offsetsOffset - b.offsetsOffset;
}

/** `<offsets partition>:<offsets offset>`, or `none`: for logs, spans and details. */
export function formatVersion(version: Version | null | undefined): string {
  return version ? `${version.offsetsPartition}:${version.offsetsOffset}` : 'none';
}
