import { GroupStatus, PartitionStatus, PartitionSyncState } from '@offsetsync/contracts';
import { describe, expect, it } from 'vitest';
import { formatPlan } from '../commands/status-format.js';
import { cutoverPlan } from './cutover-plan.js';

const S = PartitionSyncState;
const status = GroupStatus.fromPartial({
  sourceCluster: 'onprem',
  targetCluster: 'cloud',
  group: 'billing',
  partitions: [
    PartitionStatus.fromPartial({
      topic: 'orders',
      targetTopic: 'onprem.orders',
      partition: 0,
      sourceOffset: 100,
      targetOffset: -1,
      wouldCommitOffset: 137,
      replayIfMoved: 0,
      skipIfMoved: 0,
      state: S.PARTITION_SYNC_STATE_OBSERVED,
      reason: 'the link observes',
    }),
    PartitionStatus.fromPartial({
      topic: 'orders',
      targetTopic: 'onprem.orders',
      partition: 1,
      sourceOffset: 90,
      targetOffset: -1,
      wouldCommitOffset: 95,
      replayIfMoved: 3,
      skipIfMoved: 0,
      state: S.PARTITION_SYNC_STATE_OBSERVED,
    }),
  ],
});
const committed = (partition: number, offset: number) => ({
  topic: 'orders',
  partition,
  offset,
  metadata: null,
});

describe('cutoverPlan', () => {
  it('shows per committed partition what offsetsync would commit and the replay and skip of a move now', () => {
    const plan = cutoverPlan(
      [committed(2, 10), committed(1, 120), committed(0, 100), committed(3, -1)],
      status,
    );
    expect(plan.map((r) => [r.partition, r.wouldCommitOffset, r.replayIfMoved, r.skipIfMoved])).toEqual([
      [0, 137, 0, 0],
      // health saw an older commit: what a move now would replay or skip is unknown, and said why.
      [1, 95, -1, -1],
      [2, -1, -1, -1],
    ]);
    expect(plan[1]?.reason).toBe('offsetsync last saw source offset 90');
    expect(plan[2]).toMatchObject({ targetTopic: 'orders', state: S.PARTITION_SYNC_STATE_UNSPECIFIED });
    const table = formatPlan(plan).split('\n');
    expect(table[0]).toMatch(/^TOPIC\/PARTITION\s+SOURCE\s+TARGET\s+REPLAY\s+SKIP\s+STATE\s+REASON$/);
    expect(table[1]).toMatch(
      /^orders -> onprem\.orders\/0\s+100\s+\(137\)\s+0\s+0\s+OBSERVED\s+the link observes$/,
    );
    expect(table[3]).toMatch(/^orders\/2\s+10\s+-\s+-\s+-\s+UNSPECIFIED/);
  });
});
