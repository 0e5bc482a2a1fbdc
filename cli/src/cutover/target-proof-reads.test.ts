// The reads behind the proof, over an in-memory log that answers like the adapter: records in batches,
// control records between them (offsets with no data record), an error per partition. The same reads run
// against real brokers in test/e2e/cutover.test.ts.
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import type { FetchAnswer, FetchRequest, PartitionBounds, TopicPartition } from '@offsetsync/kafka';
import { beforeEach, describe, expect, it } from 'vitest';
import { readAndProve } from './target-proof-reads.js';

/** Per partition: data records by offset (`id` is the content); offsets without one are control records. */
type Log = Map<number, Map<number, number>>;

const BATCH = 3;

/** Every call of every cluster of a test, in order. */
let calls: string[] = [];

class MemoryCluster {
  constructor(
    private readonly name: string,
    private readonly logs: Log,
    private readonly ends: Map<number, number>,
    private readonly committed: Map<number, number> = new Map(),
    private readonly broken: ReadonlySet<number> = new Set(),
    /** The one topic it holds: any other is missing. */
    private readonly topic = 'orders',
  ) {}

  /** Whether a request names a partition it cannot serve. */
  private unservable(p: TopicPartition): boolean {
    return this.broken.has(p.partition) || p.topic !== this.topic;
  }

  private error(partition: number) {
    return new OffsetSyncError(`partition ${partition} is broken`, { code: ErrorCodes.KAFKA_UNREACHABLE });
  }

  partitionBounds(partitions: readonly TopicPartition[]): Promise<Array<PartitionBounds | OffsetSyncError>> {
    calls.push(`${this.name}:bounds`);
    return Promise.resolve(
      partitions.map((p) =>
        this.unservable(p)
          ? this.error(p.partition)
          : { logStartOffset: 0, highWatermark: this.ends.get(p.partition) ?? 0 },
      ),
    );
  }

  fetchRecords(requests: readonly FetchRequest[]): Promise<FetchAnswer[]> {
    calls.push(`${this.name}:fetch`);
    return Promise.resolve(
      requests.map((r) => {
        const end = this.ends.get(r.partition) ?? 0;
        const base = { topic: r.topic, partition: r.partition, requestedOffset: r.offset };
        if (this.unservable(r)) {
          return {
            ...base,
            records: [],
            nextOffset: r.offset,
            highWatermark: -1,
            lastStableOffset: -1,
            logStartOffset: -1,
            error: this.error(r.partition),
          };
        }
        // One batch of BATCH offsets, data records and control records alike.
        const next = Math.min(end, r.offset + BATCH);
        const records = [];
        for (let offset = r.offset; offset < next; offset++) {
          const id = this.logs.get(r.partition)?.get(offset);
          if (id === undefined) continue;
          records.push({
            offset,
            timestampMs: 1_000 + id,
            timestampType: 'create-time' as const,
            key: null,
            value: Buffer.from(`id:${id}`),
            headers: {},
          });
        }
        return {
          ...base,
          records,
          nextOffset: next,
          highWatermark: end,
          lastStableOffset: end,
          logStartOffset: 0,
        };
      }),
    );
  }

  fetchCommittedOffsets(): Promise<Array<TopicPartition & { offset: number; metadata: string | null }>> {
    calls.push(`${this.name}:committed`);
    return Promise.resolve(
      [...this.committed].map(([partition, offset]) => ({
        topic: this.topic,
        partition,
        offset,
        metadata: null,
      })),
    );
  }
}

/** A log of `ids` with `markers` control records after every data record. */
function log(ids: readonly number[], markers: number): { records: Map<number, number>; end: number } {
  const records = new Map<number, number>();
  let offset = 0;
  for (const id of ids) {
    records.set(offset, id);
    offset += 1 + markers;
  }
  return { records, end: offset };
}

const ids = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('readAndProve', () => {
  beforeEach(() => {
    calls = [];
  });

  it('reads the target before the source and proves an exact copy across control records', async () => {
    // Source: ids 0..29, two control records after each; target: the same ids, one after each.
    const s = log(ids(0, 30), 2);
    const t = log(ids(0, 30), 1);
    const source = new MemoryCluster('source', new Map([[0, s.records]]), new Map([[0, s.end]]));
    const target = new MemoryCluster(
      'target',
      new Map([[0, t.records]]),
      new Map([[0, t.end]]),
      new Map([[0, 2 * 12]]),
    );
    const proofs = await readAndProve({
      group: 'billing',
      committed: [{ topic: 'orders', partition: 0, offset: 3 * 12, metadata: null }],
      source,
      target,
      window: 8,
      from: 'onprem',
      to: 'cloud',
    });
    expect(proofs).toMatchObject([
      { proven: true, nextRecord: 'match', examined: 8, sourceOffset: 36, targetOffset: 24 },
    ]);
    // Every target read happened before the first source read.
    expect(calls[0]).toBe('target:committed');
    expect(calls.lastIndexOf('target:fetch')).toBeLessThan(calls.indexOf('source:fetch'));
    expect(calls.indexOf('source:fetch')).toBeGreaterThan(0);
  });

  it('asks the target about the name the link gives the topic there', async () => {
    const s = log(ids(0, 30), 0);
    const t = log(ids(0, 30), 1);
    const source = new MemoryCluster('source', new Map([[0, s.records]]), new Map([[0, s.end]]));
    const target = new MemoryCluster(
      'target',
      new Map([[0, t.records]]),
      new Map([[0, t.end]]),
      new Map([[0, 2 * 12]]),
      new Set(),
      'onprem.orders',
    );
    const input = {
      group: 'billing',
      committed: [{ topic: 'orders', partition: 0, offset: 12, metadata: null }],
      source,
      target,
      window: 8,
      from: 'onprem',
      to: 'cloud',
    };
    expect(await readAndProve({ ...input, targetTopic: (topic) => `onprem.${topic}` })).toMatchObject([
      { proven: true, sourceOffset: 12, targetOffset: 24 },
    ]);
    // Asked under the source's name, the target has no such topic: nothing is proven.
    expect(await readAndProve(input)).toMatchObject([{ proven: false }]);
  });

  it('finds the last consumed records behind runs of control records (the look-back grows)', async () => {
    const s = log(ids(0, 10), 20);
    const source = new MemoryCluster('source', new Map([[0, s.records]]), new Map([[0, s.end]]));
    const t = log(ids(0, 10), 0);
    // The target group sits one record early: the copy of the last consumed record (id 4) follows it.
    const target = new MemoryCluster(
      'target',
      new Map([[0, t.records]]),
      new Map([[0, t.end]]),
      new Map([[0, 4]]),
    );
    const [proof] = await readAndProve({
      group: 'billing',
      committed: [{ topic: 'orders', partition: 0, offset: 5 * 21, metadata: null }],
      source,
      target,
      window: 4,
      from: 'onprem',
      to: 'cloud',
    });
    expect(proof).toMatchObject({ proven: false, failure: 'REPLAY', consumedCopies: 1 });
  });

  it('reports a partition that cannot be read on either side, and one without a target commit', async () => {
    const l = log(ids(0, 10), 0);
    const logs = new Map([
      [0, l.records],
      [1, l.records],
      [2, l.records],
    ]);
    const ends = new Map([
      [0, l.end],
      [1, l.end],
      [2, l.end],
    ]);
    const source = new MemoryCluster('source', logs, ends, new Map(), new Set([1]));
    const target = new MemoryCluster(
      'target',
      logs,
      ends,
      new Map([
        [0, 5],
        [1, 5],
      ]),
      new Set([0]),
    );
    const proofs = await readAndProve({
      group: 'billing',
      committed: [0, 1, 2].map((partition) => ({ topic: 'orders', partition, offset: 5, metadata: null })),
      source,
      target,
      window: 4,
      from: 'onprem',
      to: 'cloud',
    });
    expect(proofs.map((p) => [p.partition, p.failure])).toEqual([
      ['orders-0', 'UNREADABLE'],
      ['orders-1', 'SOURCE_UNREADABLE'],
      ['orders-2', 'NO_TARGET_COMMIT'],
    ]);
    expect(proofs[0]!.message).toContain('on cloud: partition 0 is broken');
    expect(proofs[1]!.message).toContain('on onprem: partition 1 is broken');
  });
});
