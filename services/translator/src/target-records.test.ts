import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import type { FetchAnswer, FetchedRecord } from '@offsetsync/kafka';
import { TargetRecords, type CheckedRuns, type PartitionIdentity } from './target-records.js';

const KEY = 'p0';

function record(offset: number, value: string, timestampMs = 1_000 + offset): FetchedRecord {
  return {
    offset,
    timestampMs,
    timestampType: 'create-time',
    key: null,
    value: Buffer.from(value),
    headers: {},
  };
}

/** A target partition that can change the ways a real one does. */
class Partition {
  records: FetchedRecord[] = [];
  logStart = 0;
  topicId = 'id-0';
  /** The leader's epoch: one higher after every leader change, as Kafka counts. */
  leaderEpoch = 0;
  /** How many leader changes the metadata a call reads has not seen yet (a broker's stale cache). */
  metadataLag = 0;
  private generation = 0;

  get end(): number {
    return this.records.length;
  }

  append(count: number): void {
    for (let i = 0; i < count; i++) this.records.push(record(this.end, `g${this.generation}:${this.end}`));
  }

  /**
   * Deleted and created again with `count` records (same offsets, new id, epochs from 0). With `changedAt` the records
   * are the old ones except one (index `changedAt % count`), which only the new id tells; without it,
   * all are new.
   */
  recreate(count: number, changedAt: number | undefined): void {
    this.generation += 1;
    this.topicId = `id-${this.generation}`;
    // A new topic's partitions start again at leader epoch 0.
    this.leaderEpoch = 0;
    const old = this.records;
    const changed = changedAt === undefined || count === 0 ? -1 : changedAt % count;
    this.records = [];
    this.logStart = 0;
    for (let o = 0; o < count; o++) {
      const kept = changedAt !== undefined && o !== changed ? old[o] : undefined;
      this.records.push(kept ?? record(o, `g${this.generation}:${o}`));
    }
  }

  /** The identity a call reads from the metadata (possibly not yet the leader's own epoch). */
  identity(): PartitionIdentity {
    return { topicId: this.topicId, leaderEpoch: Math.max(0, this.leaderEpoch - this.metadataLag) };
  }

  /** A clean leader change: the same records, a new epoch. */
  elect(): void {
    this.leaderEpoch += 1;
  }

  /**
   * An unclean leader election: the new leader lacked the records from `offset` on, and others took
   * their offsets (same id, a new epoch).
   */
  diverge(offset: number): void {
    this.elect();
    this.generation += 1;
    for (let o = Math.max(offset, this.logStart); o < this.end; o++)
      this.records[o] = record(o, `g${this.generation}:${o}`);
  }

  /**
   * Records from `offset` on, at most `max`, as the broker answers a fetch; at `currentLeaderEpoch`, only
   * when it is the leader's (FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH otherwise).
   */
  read(offset: number, max: number, currentLeaderEpoch?: number): FetchAnswer {
    if (currentLeaderEpoch !== undefined && currentLeaderEpoch !== this.leaderEpoch) {
      return {
        topic: 't',
        partition: 0,
        requestedOffset: offset,
        records: [],
        nextOffset: offset,
        highWatermark: -1,
        lastStableOffset: -1,
        logStartOffset: -1,
        error: new OffsetSyncError('fenced', { code: ErrorCodes.KAFKA_BROKER_ERROR }),
      };
    }
    const from = Math.max(offset, this.logStart);
    const records = this.records.slice(from, from + max);
    return {
      topic: 't',
      partition: 0,
      requestedOffset: offset,
      records,
      nextOffset: records.length === 0 ? from : records.at(-1)!.offset + 1,
      highWatermark: this.end,
      lastStableOffset: this.end,
      logStartOffset: this.logStart,
      ...(currentLeaderEpoch === undefined ? {} : { leaderEpoch: currentLeaderEpoch }),
    };
  }
}

/** One locate call's use of the kept records: bound and check, then serve or read and keep. */
function startCall(kept: TargetRecords, target: Partition): CheckedRuns {
  const checked: CheckedRuns = new Set();
  const check = kept.bound(
    KEY,
    { logStartOffset: target.logStart, highWatermark: target.end },
    target.identity(),
  );
  if (check !== undefined)
    kept.confirm(KEY, target.read(check.offset, 50, check.currentLeaderEpoch), checked);
  return checked;
}

describe('target records kept across calls', () => {
  it('serve only what a fresh read of the target would return, whatever happened to the topic in between', () => {
    const change = fc.oneof(
      fc.record({ kind: fc.constant('append' as const), count: fc.integer({ min: 0, max: 30 }) }),
      fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
      fc.record({ kind: fc.constant('diverge' as const), at: fc.nat() }),
      fc.record({ kind: fc.constant('elect' as const) }),
      fc.record({ kind: fc.constant('lag' as const), by: fc.integer({ min: 0, max: 2 }) }),
      fc.record({
        kind: fc.constant('recreate' as const),
        count: fc.integer({ min: 0, max: 60 }),
        changedAt: fc.option(fc.nat(), { nil: undefined }),
      }),
    );
    const call = fc.record({
      change,
      reads: fc.array(fc.record({ at: fc.nat(), max: fc.integer({ min: 1, max: 40 }) }), { maxLength: 6 }),
    });
    fc.assert(
      fc.property(
        fc.array(call, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 2, max: 50 }),
        (calls, maxServed) => {
          const target = new Partition();
          target.append(40);
          const kept = new TargetRecords(1 << 20, maxServed);
          for (const { change: c, reads } of calls) {
            if (c.kind === 'append') target.append(c.count);
            else if (c.kind === 'truncate')
              target.logStart = Math.max(target.logStart, c.at % (target.end + 1));
            else if (c.kind === 'diverge') target.diverge(c.at % (target.end + 1));
            else if (c.kind === 'elect') target.elect();
            else if (c.kind === 'lag') target.metadataLag = c.by;
            else target.recreate(c.count, c.changedAt);
            const checked = startCall(kept, target);
            for (const { at, max } of reads) {
              const offset = target.logStart + (at % Math.max(1, target.end - target.logStart + 1));
              const served = kept.serve(KEY, offset, checked);
              if (served === undefined) {
                kept.absorb(KEY, target.read(offset, max), checked, target.identity());
                continue;
              }
              const fresh = target.read(offset, served.records.length).records;
              // This model has no offset gaps: a served read is a non-empty prefix of what is there.
              expect(served.records.length).toBeGreaterThan(0);
              expect(served.records).toEqual(fresh);
              expect(served.nextOffset).toBe(fresh.at(-1)!.offset + 1);
            }
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('drop a run after an unclean leader election, also while the metadata still shows the old epoch, and serve nothing a call has not checked', () => {
    for (const metadataLag of [0, 1]) {
      const target = new Partition();
      target.append(10);
      const kept = new TargetRecords(1 << 20, 100);
      const first = startCall(kept, target);
      kept.absorb(KEY, target.read(0, 10), first, target.identity());
      expect(kept.serve(KEY, 3, first)?.records.map((r) => r.offset)).toEqual([3, 4, 5, 6, 7, 8, 9]);
      // A new call that has not checked the run yet is not served from it.
      expect(kept.serve(KEY, 3, new Set())).toBeUndefined();
      // A call at the same epoch is, after its check.
      expect(kept.serve(KEY, 3, startCall(kept, target))?.records).toHaveLength(7);
      // The same topic id and bounds, other records from offset 5 on: only the leader epoch tells.
      target.diverge(5);
      target.metadataLag = metadataLag;
      const second = startCall(kept, target);
      expect(kept.serve(KEY, 3, second)).toBeUndefined();
      expect(kept.heldBytes).toBe(0);
    }
  });

  it('drop a run of a topic recreated with the same records except one in the middle (only its id tells)', () => {
    const target = new Partition();
    target.append(20);
    const kept = new TargetRecords(1 << 20, 100);
    kept.absorb(KEY, target.read(0, 20), startCall(kept, target), target.identity());
    target.recreate(20, 7);
    expect(target.records[19]).toEqual(record(19, 'g0:19'));
    const checked = startCall(kept, target);
    expect(kept.serve(KEY, 0, checked)).toBeUndefined();
  });

  it('stay within the byte budget: other partitions go first, then the oldest records of a large run', () => {
    const target = new Partition();
    target.append(400);
    const kept = new TargetRecords(20_000, 1_000);
    const checked: CheckedRuns = new Set();
    kept.absorb('a', target.read(0, 50), checked, target.identity());
    kept.absorb('b', target.read(0, 50), checked, target.identity());
    // 400 records are more than half the budget: the run keeps its newest quarter of it, and the least
    // recently used other run goes to make room.
    kept.absorb(KEY, target.read(0, 400), checked, target.identity());
    expect(kept.heldBytes).toBeLessThanOrEqual(20_000);
    expect(kept.serve('a', 0, checked)).toBeUndefined();
    expect(kept.serve('b', 0, checked)?.records).toHaveLength(50);
    expect(kept.serve(KEY, 0, checked)).toBeUndefined();
    const newest = kept.serve(KEY, 399, checked)!;
    expect(newest.records.map((r) => r.offset)).toEqual([399]);
    expect(newest.nextOffset).toBe(400);
  });
});
