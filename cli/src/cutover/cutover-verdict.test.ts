import fc from 'fast-check';
import { GroupStatus, PartitionStatus, PartitionSyncState } from '@offsetsync/contracts';
import { describe, expect, it } from 'vitest';
import { type CutoverInput, cutoverVerdict, provenVerdict } from './cutover-verdict.js';
import type { PartitionProof } from './target-proof.js';

const S = PartitionSyncState;

function synced(
  topic: string,
  partition: number,
  sourceOffset: number,
  extra: Partial<PartitionStatus> = {},
) {
  return PartitionStatus.fromPartial({
    topic,
    partition,
    sourceOffset,
    targetOffset: sourceOffset + 7,
    exact: true,
    replayIfMoved: 0,
    state: S.PARTITION_SYNC_STATE_SYNCED,
    ...extra,
  });
}

function input(over: Partial<CutoverInput> = {}): CutoverInput {
  return {
    group: 'billing',
    from: 'onprem',
    to: 'cloud',
    source: { state: 'Empty', protocolType: 'consumer', memberCount: 0 },
    sourceCommitted: [
      { topic: 'orders', partition: 1, offset: 120, metadata: null },
      { topic: 'orders', partition: 0, offset: 100, metadata: null },
    ],
    status: GroupStatus.fromPartial({
      sourceCluster: 'onprem',
      targetCluster: 'cloud',
      group: 'billing',
      partitions: [synced('orders', 0, 100), synced('orders', 1, 120)],
    }),
    ...over,
  };
}

const codes = (i: CutoverInput) => {
  const v = cutoverVerdict(i);
  return v.safe ? [] : v.blocks.map((b) => `${b.code}${b.partition ? `@${b.partition}` : ''}`);
};

describe('cutoverVerdict', () => {
  it('is safe when the group is empty on the source and every commit is applied exactly', () => {
    const v = cutoverVerdict(input());
    expect(v).toMatchObject({ safe: true, partitions: 2 });
    expect(v.summary).toContain('safe to start group billing on cloud');
  });

  it('refuses while the group has members on the source, and names how many', () => {
    const v = cutoverVerdict(
      input({ source: { state: 'Stable', protocolType: 'consumer', memberCount: 3 } }),
    );
    expect(v.safe).toBe(false);
    expect(codes(input({ source: { state: 'Stable', protocolType: 'consumer', memberCount: 3 } }))).toEqual([
      'ACTIVE_ON_SOURCE',
    ]);
    expect(!v.safe && v.blocks[0]!.message).toContain('3 member(s) on onprem (state Stable)');
  });

  it('waits for a source commit offsetsync has not seen yet (the last commit before the group stopped)', () => {
    const status = input().status!;
    status.partitions[1] = synced('orders', 1, 110);
    expect(codes(input({ status }))).toEqual(['PENDING@orders-1']);
    status.partitions.pop();
    expect(codes(input({ status }))).toEqual(['PENDING@orders-1']);
  });

  it('names the partition state that blocks: pending, inexact with its replay, refused, active or ahead on the target', () => {
    const cases: [Partial<PartitionStatus>, string, string][] = [
      [{ state: S.PARTITION_SYNC_STATE_PENDING, reason: 'record not on cloud yet' }, 'PENDING', 'record not'],
      [{ exact: false, replayIfMoved: 42 }, 'INEXACT', 'replay 42 records'],
      [{ exact: false, replayIfMoved: -1 }, 'INEXACT', 'unknown number'],
      [{ state: S.PARTITION_SYNC_STATE_REFUSED, reason: 'LogAppendTime' }, 'REFUSED', 'LogAppendTime'],
      [{ state: S.PARTITION_SYNC_STATE_SKIPPED_ACTIVE_ON_TARGET }, 'ACTIVE_ON_TARGET', 'members on cloud'],
      [{ state: S.PARTITION_SYNC_STATE_TARGET_AHEAD }, 'TARGET_AHEAD', 'already committed on cloud'],
      [
        {
          state: S.PARTITION_SYNC_STATE_OBSERVED,
          targetOffset: -1,
          wouldCommitOffset: 107,
          replayIfMoved: 0,
          skipIfMoved: 0,
        },
        'OBSERVED',
        'would commit 107 there (a consumer would replay 0 records, skip 0 records) and commits nothing',
      ],
    ];
    for (const [over, code, words] of cases) {
      const status = input().status!;
      status.partitions[0] = synced('orders', 0, 100, over);
      const v = cutoverVerdict(input({ status }));
      expect(v.safe).toBe(false);
      expect(!v.safe && v.blocks.map((b) => [b.code, b.partition])).toEqual([[code, 'orders-0']]);
      expect(!v.safe && v.blocks[0]!.message).toContain(words);
    }
  });

  it('refuses a group offsetsync never saw, and a group with nothing committed', () => {
    expect(codes(input({ status: undefined }))).toEqual(['UNKNOWN_TO_OFFSETSYNC']);
    expect(
      codes(input({ sourceCommitted: [{ topic: 'orders', partition: 0, offset: -1, metadata: null }] })),
    ).toEqual(['NO_SOURCE_COMMITS']);
  });

  it('is safe exactly when no member is left and every committed partition is synced, exact, at that offset', () => {
    const partition = fc.record({
      offset: fc.integer({ min: 1, max: 5 }),
      // Mostly the interesting case: offsetsync saw exactly the source's offset and reports it synced.
      seen: fc.constantFrom('same', 'same', 'same', 'older', 'never'),
      state: fc.oneof(
        { weight: 4, arbitrary: fc.constant(S.PARTITION_SYNC_STATE_SYNCED) },
        { weight: 1, arbitrary: fc.constantFrom(...[2, 3, 4, 5].map((n) => n as PartitionSyncState)) },
      ),
      exact: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 }),
        fc.array(partition, { minLength: 1, maxLength: 5 }),
        (members, ps) => {
          const v = cutoverVerdict(
            input({
              source: { state: members ? 'Stable' : 'Empty', protocolType: 'consumer', memberCount: members },
              sourceCommitted: ps.map((p, i) => ({
                topic: 't',
                partition: i,
                offset: p.offset,
                metadata: null,
              })),
              status: GroupStatus.fromPartial({
                partitions: ps.flatMap((p, i) =>
                  p.seen === 'never'
                    ? []
                    : [
                        synced('t', i, p.offset - (p.seen === 'older' ? 1 : 0), {
                          state: p.state,
                          exact: p.exact,
                        }),
                      ],
                ),
              }),
            }),
          );
          const expected =
            members === 0 &&
            ps.every((p) => p.seen === 'same' && p.state === S.PARTITION_SYNC_STATE_SYNCED && p.exact);
          expect(v.safe).toBe(expected);
        },
      ),
    );
  });
});

describe('provenVerdict', () => {
  const proof = (partition: string, over: Partial<PartitionProof> = {}): PartitionProof => ({
    partition,
    sourceOffset: 100,
    targetOffset: 107,
    nextRecord: 'match',
    examined: 500,
    consumedCopies: 0,
    identicalAcrossCommit: 0,
    proven: true,
    failure: null,
    message: `${partition}: proven`,
    ...over,
  });
  const link = { group: 'billing', to: 'cloud' };

  it('keeps a safe verdict safe only when every partition is proven on the target', () => {
    const v = provenVerdict(cutoverVerdict(input()), [proof('orders-0'), proof('orders-1')], link);
    expect(v.safe).toBe(true);
    expect(v.summary).toContain('proven on cloud');
  });

  it('turns each unproven partition into a block with its code and reason', () => {
    const v = provenVerdict(
      cutoverVerdict(input()),
      [
        proof('orders-0', {
          proven: false,
          failure: 'REPLAY',
          consumedCopies: 1,
          message: 'orders-0: replays',
        }),
        proof('orders-1', { proven: false, failure: 'NEXT_RECORD_MISMATCH', message: 'orders-1: mismatch' }),
      ],
      link,
    );
    expect(v).toEqual({
      safe: false,
      summary: 'not safe to start group billing on cloud yet:',
      blocks: [
        { code: 'REPLAY_ON_TARGET', partition: 'orders-0', message: 'orders-0: replays' },
        { code: 'NOT_PROVEN', partition: 'orders-1', message: 'orders-1: mismatch' },
      ],
    });
    const unreadable = provenVerdict(
      cutoverVerdict(input()),
      [proof('orders-0'), proof('orders-1', { proven: false, failure: 'UNREADABLE' })],
      link,
    );
    expect(!unreadable.safe && unreadable.blocks.map((b) => b.code)).toEqual(['TARGET_UNREADABLE']);
  });

  it('refuses when a partition went unchecked, and leaves a blocked verdict as it was', () => {
    const v = provenVerdict(cutoverVerdict(input()), [proof('orders-0')], link);
    expect(!v.safe && v.blocks.map((b) => b.code)).toEqual(['NOT_PROVEN']);
    const blocked = cutoverVerdict(input({ status: undefined }));
    expect(provenVerdict(blocked, [], link)).toBe(blocked);
  });
});
