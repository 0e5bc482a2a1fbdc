// What `offsetsync cutover --dry-run` shows per partition: the group's position on the source, what
// offsetsync committed on the target or, on a link that observes, would commit there, and the records a
// consumer moving now would read again or pass over. Pure, from the source's committed offsets and health.
import { type GroupStatus, PartitionSyncState } from '@offsetsync/contracts';
import type { CommittedOffset } from '@offsetsync/kafka';

/** One partition of the group as a move now would find it. */
export interface PlanRow {
  topic: string;
  partition: number;
  /** The topic's name on the target. */
  targetTopic: string;
  /** The group's committed offset on the source now. */
  sourceOffset: number;
  /** The offset offsetsync committed on the target; -1 when none. */
  targetOffset: number;
  /** On a link that observes, the offset offsetsync would commit; -1 otherwise. */
  wouldCommitOffset: number;
  /** Records a consumer moving now would read again; -1 when unknown. */
  replayIfMoved: number;
  /** Records a consumer moving now would pass over unread; -1 when unknown. */
  skipIfMoved: number;
  /** What health says of the partition; UNSPECIFIED when it never saw it. */
  state: PartitionSyncState;
  reason: string;
}

/** The plan of every partition the group committed on the source, ordered by topic and partition. */
export function cutoverPlan(
  sourceCommitted: readonly CommittedOffset[],
  status: GroupStatus | undefined,
): PlanRow[] {
  const known = new Map(status?.partitions.map((p) => [`${p.topic}-${p.partition}`, p]));
  return sourceCommitted
    .filter((c) => c.offset >= 0)
    .sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition)
    .map((c) => {
      const p = known.get(`${c.topic}-${c.partition}`);
      // A status of an older source commit says nothing about where this one would land.
      const current = p !== undefined && p.sourceOffset === c.offset ? p : undefined;
      return {
        topic: c.topic,
        partition: c.partition,
        targetTopic: p === undefined || p.targetTopic === '' ? c.topic : p.targetTopic,
        sourceOffset: c.offset,
        targetOffset: p?.targetOffset ?? -1,
        wouldCommitOffset: p?.wouldCommitOffset ?? -1,
        replayIfMoved: current?.replayIfMoved ?? -1,
        skipIfMoved: current?.skipIfMoved ?? -1,
        state: p?.state ?? PartitionSyncState.PARTITION_SYNC_STATE_UNSPECIFIED,
        reason:
          p === undefined
            ? 'offsetsync has not seen this partition'
            : current === undefined
              ? `offsetsync last saw source offset ${p.sourceOffset}`
              : p.reason,
      };
    });
}
