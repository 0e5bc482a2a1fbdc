import { describe, expect, it } from 'vitest';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import type { PartitionBounds, TopicPartition } from '@offsetsync/kafka';
import { LogBoundsCache } from './log-bounds-cache.js';

const orders0 = { topic: 'orders', partition: 0 };
const orders1 = { topic: 'orders', partition: 1 };

/** A cluster whose bounds the test sets, counting the reads. */
function cluster(initial: Record<string, PartitionBounds | OffsetSyncError> = {}) {
  const bounds = new Map(Object.entries(initial));
  const reads: TopicPartition[][] = [];
  const read = (partitions: readonly TopicPartition[]) => {
    reads.push([...partitions]);
    return Promise.resolve(
      partitions.map(
        (tp) =>
          bounds.get(`${tp.topic}-${tp.partition}`) ??
          new OffsetSyncError('no such topic', { code: ErrorCodes.TOPIC_MISSING }),
      ),
    );
  };
  return { bounds, reads, read };
}

describe('LogBoundsCache', () => {
  it('answers offsets within the cached bounds without a read, and nothing else', async () => {
    const c = cluster({ 'orders-0': { logStartOffset: 10, highWatermark: 100 } });
    const cache = new LogBoundsCache(c.read);
    expect(cache.withinCached(orders0, 50)).toBe(false);
    await cache.refresh([orders0]);
    expect([10, 50, 100].map((o) => cache.withinCached(orders0, o))).toEqual([true, true, true]);
    // Above the cached end the log may have grown; below the cached start the topic may be new.
    expect([9, 101].map((o) => cache.withinCached(orders0, o))).toEqual([false, false]);
    expect(cache.withinCached(orders1, 0)).toBe(false);
    expect(c.reads).toEqual([[orders0]]);
  });

  it('reads many partitions in one call and answers in request order', async () => {
    const c = cluster({
      'orders-0': { logStartOffset: 0, highWatermark: 5 },
      'orders-1': { logStartOffset: 1, highWatermark: 7 },
    });
    const cache = new LogBoundsCache(c.read);
    expect(await cache.refresh([orders1, orders0])).toEqual([
      { logStartOffset: 1, highWatermark: 7 },
      { logStartOffset: 0, highWatermark: 5 },
    ]);
    expect(c.reads).toHaveLength(1);
    expect(await cache.refresh([])).toEqual([]);
    expect(c.reads).toHaveLength(1);
  });

  it('never lets an older read that answers late replace the bounds of a newer one', async () => {
    let releaseOld: ((b: PartitionBounds[]) => void) | undefined;
    let calls = 0;
    const cache = new LogBoundsCache(() => {
      calls++;
      if (calls === 1) return new Promise((resolve) => (releaseOld = resolve));
      return Promise.resolve([{ logStartOffset: 0, highWatermark: 200 }]);
    });
    const old = cache.refresh([orders0]);
    await cache.refresh([orders0]);
    releaseOld!([{ logStartOffset: 0, highWatermark: 100 }]);
    await old;
    expect(cache.cached(orders0)).toEqual({ logStartOffset: 0, highWatermark: 200 });
  });

  it('forgets a partition that went missing, keeps it through other read errors', async () => {
    const c = cluster({ 'orders-0': { logStartOffset: 0, highWatermark: 9 } });
    const cache = new LogBoundsCache(c.read);
    await cache.refresh([orders0]);
    c.bounds.set('orders-0', new OffsetSyncError('leader moved', { code: ErrorCodes.KAFKA_BROKER_ERROR }));
    await cache.refresh([orders0]);
    expect(cache.cached(orders0)).toEqual({ logStartOffset: 0, highWatermark: 9 });
    c.bounds.delete('orders-0');
    const [answer] = await cache.refresh([orders0]);
    expect(answer).toMatchObject({ code: ErrorCodes.TOPIC_MISSING });
    expect(cache.cached(orders0)).toBeUndefined();
  });

  it('keeps at most its capacity, dropping the least recently used partition', async () => {
    const c = cluster({
      'orders-0': { logStartOffset: 0, highWatermark: 1 },
      'orders-1': { logStartOffset: 0, highWatermark: 1 },
      'orders-2': { logStartOffset: 0, highWatermark: 1 },
    });
    const cache = new LogBoundsCache(c.read, 2);
    await cache.refresh([orders0, orders1]);
    cache.cached(orders0);
    await cache.refresh([{ topic: 'orders', partition: 2 }]);
    expect(cache.size).toBe(2);
    expect(cache.cached(orders1)).toBeUndefined();
    expect(cache.cached(orders0)).toBeDefined();
    expect(() => new LogBoundsCache(c.read, 0)).toThrow(RangeError);
  });
});
