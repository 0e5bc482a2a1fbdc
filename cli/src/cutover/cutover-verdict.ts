// Decides whether a consumer group can start on the target now: pure, from what the source cluster and the
// health service report, so every reason `offsetsync cutover` gives is unit-tested.
import { type GroupStatus, type PartitionStatus, PartitionSyncState } from '@offsetsync/contracts';
import { type CommittedOffset, type GroupDescription } from '@offsetsync/kafka';
import type { PartitionProof } from './target-proof.js';

/** Why a cutover is not safe yet. Stable codes for scripts; the message is for people. */
type CutoverBlockCode =
  | 'ACTIVE_ON_SOURCE'
  | 'NO_SOURCE_COMMITS'
  | 'UNKNOWN_TO_OFFSETSYNC'
  | 'PENDING'
  | 'INEXACT'
  | 'REFUSED'
  | 'ACTIVE_ON_TARGET'
  | 'TARGET_AHEAD'
  /** The source cluster or the health service could not be asked. */
  | 'UNREACHABLE'
  /** The target's committed offset could not be proven exact from the records there (target-proof.ts). */
  | 'NOT_PROVEN'
  /** Records from the committed target offset on are copies of records the group consumed on the source. */
  | 'REPLAY_ON_TARGET'
  /** The target's committed offsets or records could not be read. */
  | 'TARGET_UNREADABLE'
  /** The link's filter keeps the group or the topic off the target: it will never be moved there. */
  | 'EXCLUDED'
  /** The link observes (shadow mode): offsetsync decides what it would commit and commits nothing. */
  | 'OBSERVED';

export interface CutoverBlock {
  code: CutoverBlockCode;
  /** `topic-partition`, or empty for a reason about the whole group. */
  partition: string;
  message: string;
}

export interface CutoverInput {
  group: string;
  from: string;
  to: string;
  /** The group on the source cluster right now. */
  source: GroupDescription;
  /** Its committed offsets on the source right now (negative offsets mean "none"). */
  sourceCommitted: readonly CommittedOffset[];
  /** What the health service knows about the group on the link; undefined when it never saw it. */
  status: GroupStatus | undefined;
}

export type CutoverVerdict =
  | { safe: true; partitions: number; summary: string }
  | { safe: false; blocks: CutoverBlock[]; summary: string };

const tp = (p: { topic: string; partition: number }): string => `${p.topic}-${p.partition}`;

/** A count of records, or `unknown` for -1. */
const countText = (n: number): string => (n < 0 ? 'an unknown number of records' : `${n} records`);

/** What one partition still lacks, or undefined when the target holds the exact translation of its commit. */
function partitionBlock(
  committed: CommittedOffset,
  status: PartitionStatus | undefined,
  to: string,
): CutoverBlock | undefined {
  const partition = tp(committed);
  if (status === undefined || status.sourceOffset !== committed.offset) {
    const seen = status === undefined ? 'has not seen it yet' : `last saw offset ${status.sourceOffset}`;
    return {
      code: 'PENDING',
      partition,
      message: `${partition}: the source committed offset ${committed.offset}; offsetsync ${seen}`,
    };
  }
  const why = status.reason === '' ? '' : `: ${status.reason}`;
  switch (status.state) {
    case PartitionSyncState.PARTITION_SYNC_STATE_SYNCED:
      if (status.exact) return undefined;
      return {
        code: 'INEXACT',
        partition,
        message:
          `${partition}: translated inexactly; a consumer on ${to} would replay ` +
          countText(status.replayIfMoved),
      };
    case PartitionSyncState.PARTITION_SYNC_STATE_REFUSED:
      return { code: 'REFUSED', partition, message: `${partition}: translation refused${why}` };
    case PartitionSyncState.PARTITION_SYNC_STATE_EXCLUDED:
      return { code: 'EXCLUDED', partition, message: `${partition}: never sent to ${to}${why}` };
    case PartitionSyncState.PARTITION_SYNC_STATE_OBSERVED:
      return {
        code: 'OBSERVED',
        partition,
        message:
          `${partition}: the link to ${to} observes: offsetsync would commit ${status.wouldCommitOffset ?? 'an unknown offset'} there ` +
          `(a consumer would replay ${countText(status.replayIfMoved)}, skip ${countText(status.skipIfMoved ?? -1)}) ` +
          "and commits nothing; set the link's mode to commit",
      };
    case PartitionSyncState.PARTITION_SYNC_STATE_SKIPPED_ACTIVE_ON_TARGET:
      return {
        code: 'ACTIVE_ON_TARGET',
        partition,
        message: `${partition}: the group has members on ${to}, so offsetsync left its offsets alone${why}`,
      };
    case PartitionSyncState.PARTITION_SYNC_STATE_TARGET_AHEAD:
      return {
        code: 'TARGET_AHEAD',
        partition,
        message: `${partition}: the application already committed on ${to}, newer than the source${why}`,
      };
    default:
      return { code: 'PENDING', partition, message: `${partition}: not applied on ${to} yet${why}` };
  }
}

/**
 * Safe only when the group has no members on the source and every partition it committed there is
 * translated exactly and applied on the target, for the very offset the source holds now.
 */
export function cutoverVerdict(input: CutoverInput): CutoverVerdict {
  const { group, from, to } = input;
  const blocks: CutoverBlock[] = [];
  if (input.source.memberCount > 0) {
    blocks.push({
      code: 'ACTIVE_ON_SOURCE',
      partition: '',
      message:
        `group ${group} still has ${input.source.memberCount} member(s) on ${from} ` +
        `(state ${input.source.state}); stop its consumers there first`,
    });
  }
  const committed = input.sourceCommitted
    .filter((c) => c.offset >= 0)
    .sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition);
  if (committed.length === 0) {
    blocks.push({
      code: 'NO_SOURCE_COMMITS',
      partition: '',
      message: `group ${group} has no committed offsets on ${from}; there is nothing to move`,
    });
  } else if (input.status === undefined) {
    blocks.push({
      code: 'UNKNOWN_TO_OFFSETSYNC',
      partition: '',
      message: `offsetsync has not seen group ${group} on ${from} -> ${to}; is a collector running for ${from}?`,
    });
  } else {
    const byPartition = new Map(input.status.partitions.map((p) => [tp(p), p]));
    for (const c of committed) {
      const block = partitionBlock(c, byPartition.get(tp(c)), to);
      if (block) blocks.push(block);
    }
  }
  if (blocks.length === 0) {
    return {
      safe: true,
      partitions: committed.length,
      summary:
        `safe to start group ${group} on ${to}: all ${committed.length} partition(s) it committed on ${from} ` +
        'are translated exactly and applied; nothing will be replayed or skipped',
    };
  }
  return { safe: false, blocks, summary: `not safe to start group ${group} on ${to} yet:` };
}

const PROOF_BLOCKS: Readonly<Record<NonNullable<PartitionProof['failure']>, CutoverBlockCode>> = {
  NO_TARGET_COMMIT: 'NOT_PROVEN',
  TARGET_TRUNCATED: 'NOT_PROVEN',
  TARGET_PAST_END: 'NOT_PROVEN',
  NEXT_RECORD_NOT_ON_TARGET: 'NOT_PROVEN',
  NEXT_RECORD_MISMATCH: 'NOT_PROVEN',
  LAST_CONSUMED_MISMATCH: 'NOT_PROVEN',
  IDENTICAL_RECORDS_AMBIGUOUS: 'NOT_PROVEN',
  NOTHING_TO_COMPARE: 'NOT_PROVEN',
  REPLAY: 'REPLAY_ON_TARGET',
  UNREADABLE: 'TARGET_UNREADABLE',
  SOURCE_UNREADABLE: 'UNREACHABLE',
};

/**
 * The verdict once the target's records were checked: a safe verdict stays safe only when every partition
 * it counted is proven on the target (one proof each); each partition that is not becomes a block.
 */
export function provenVerdict(
  verdict: CutoverVerdict,
  proofs: readonly PartitionProof[],
  link: { group: string; to: string },
): CutoverVerdict {
  const { group, to } = link;
  if (!verdict.safe) return verdict;
  const blocks: CutoverBlock[] = proofs
    .filter((p) => !p.proven)
    .map((p) => ({
      code: PROOF_BLOCKS[p.failure ?? 'NOTHING_TO_COMPARE'],
      partition: p.partition,
      message: p.message,
    }));
  if (proofs.length !== verdict.partitions) {
    blocks.push({
      code: 'NOT_PROVEN',
      partition: '',
      message: `${proofs.length} of the ${verdict.partitions} partition(s) were checked on ${to}`,
    });
  }
  if (blocks.length > 0)
    return { safe: false, blocks, summary: `not safe to start group ${group} on ${to} yet:` };
  return {
    ...verdict,
    summary:
      `${verdict.summary}; proven on ${to}: at every committed offset there the next record is the ` +
      "counterpart of the source's, and no copy of a consumed record follows",
  };
}
