// What the target's committed offsets, read again around offsetsync's own commit, mean for it. Consumers
// that use assign() (Flink, Spark, admin tools) commit without being members of the group, so the broker
// does not refuse offsetsync's admin-style commit (generation -1) while they run: nothing but reading the
// target tells offsetsync that the application committed. The group step reads the target when it
// decides, again right before it commits, and once more after; the reservation check reads it before
// committing a newer version again. Pure.
//
// What stays possible: an application commit that reaches the broker after the last read and before
// offsetsync's OffsetCommit is overwritten, and no read can tell afterwards (the target then shows
// offsetsync's mark either way). Kafka has no compare-and-set for committed offsets. See the committer's
// README, "The application's own commits".
import { formatCommitMetadata, formatVersion } from '@offsetsync/contracts';
import type { AppliedRecord } from './applied-record.js';
import { isApplicationCommit, targetFloor, type TargetCommit } from './apply-decision.js';

/** What to do with a reserved partition after reading the target again right before committing it. */
export type BeforeCommitCheck =
  | { kind: 'commit' }
  /** offsetsync's mark on the target now holds a newer version (the target is its own floor). */
  | { kind: 'skip'; reason: 'STALE_VERSION'; detail: string }
  /**
   * The application committed on the target after the decision: keep its commit, and record that the
   * target owns the position from `ownedSinceMs`.
   */
  | { kind: 'skip'; reason: 'TARGET_AHEAD'; detail: string; ownedSinceMs: number };

/** What {@link checkBeforeCommit} compares. */
export interface BeforeCommitInput {
  /** Alias of the link's source cluster (the origin of offsetsync's mark). */
  source: string;
  /** The record reserved for the commit (its version is set). */
  reserved: AppliedRecord;
  /** What KV held before the reservation: what offsetsync last committed there. */
  lastCommitted: AppliedRecord | undefined;
  /** The partition's committed offset on the target when the decision was made. */
  seen: TargetCommit | undefined;
  /** The partition's committed offset on the target now, right before the commit. */
  current: TargetCommit | undefined;
  nowMs: number;
}

/** Whether two reads of a partition's committed offset show the same commit. */
export function sameCommit(a: TargetCommit | undefined, b: TargetCommit | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.offset === b.offset && (a.metadata ?? '') === (b.metadata ?? '');
}

/**
 * Whether a reserved partition may still be committed, now that the target was read again right before
 * the commit. Nothing changed since the decision: commit. offsetsync's mark now holds a newer version:
 * stale. An application commit (no mark, not the offset offsetsync last committed) that was not there at
 * the decision: the target owns the position from now (or from the commit's real time when a collector on
 * the target reported it); it is reported, never overwritten.
 */
export function checkBeforeCommit(input: BeforeCommitInput): BeforeCommitCheck {
  const { reserved, current } = input;
  if (sameCommit(input.seen, current)) return { kind: 'commit' };
  const version = reserved.version;
  if (version === null) return { kind: 'commit' };
  const floor = targetFloor(current, input.source, { version, targetOffset: reserved.targetOffset });
  if (floor !== undefined) return { kind: 'skip', ...floor };
  if (current !== undefined && isApplicationCommit(current, input.lastCommitted)) {
    const ownedSinceMs = current.commitTimestampMs ?? input.nowMs;
    return {
      kind: 'skip',
      reason: 'TARGET_AHEAD',
      detail:
        `the application committed offset ${current.offset} on the target after offsetsync decided to commit ` +
        `version ${formatVersion(version)} (offset ${reserved.targetOffset}); seen right before the commit, ` +
        `so offsetsync kept the application's commit and did not commit this partition`,
      ownedSinceMs,
    };
  }
  return { kind: 'commit' };
}

/**
 * What the target shows right after offsetsync committed `committed` with its mark for `source`:
 * `as-committed`; an `application-commit` that landed after offsetsync's (it stands: offsetsync does not
 * touch it, and the next decision records the ownership); or `other` (another instance's commit, or the
 * offsets were deleted meanwhile), left to the version check and the re-commit check.
 */
export function readAfterCommit(
  source: string,
  committed: AppliedRecord,
  current: TargetCommit | undefined,
):
  | { kind: 'as-committed' }
  | { kind: 'application-commit'; offset: number; detail: string }
  | { kind: 'other' } {
  const version = committed.version;
  if (version === null) return { kind: 'other' };
  const ours = {
    offset: committed.targetOffset,
    metadata: formatCommitMetadata({ origin: source, ...version }, ''),
  };
  if (sameCommit(ours, current)) return { kind: 'as-committed' };
  if (current !== undefined && isApplicationCommit(current, committed)) {
    return {
      kind: 'application-commit',
      offset: current.offset,
      detail:
        `the application committed offset ${current.offset} on the target right after offsetsync committed ` +
        `${committed.targetOffset}; the application's commit stands`,
    };
  }
  return { kind: 'other' };
}

/**
 * Why a newer reserved version must not be committed again over what the target holds now (see the
 * re-commit check), or undefined when it may: offsetsync's mark holds a newer version (the floor), or the
 * application committed there itself. Pure.
 */
export function recommitBlocked(
  source: string,
  record: AppliedRecord,
  current: TargetCommit | undefined,
): string | undefined {
  if (record.version === null) return 'no version reserved';
  const floor = targetFloor(current, source, { version: record.version, targetOffset: record.targetOffset });
  if (floor !== undefined) return floor.detail;
  if (current !== undefined && isApplicationCommit(current, record)) {
    return `the application committed offset ${current.offset} on the target`;
  }
  return undefined;
}
