import { describe, expect, it } from 'vitest';
import { OffsetCommitted } from '@offsetsync/contracts';
import { isForwardRevision, nextLookMs, RevisionWatch, type WatchedTranslation } from './revisions.js';

function watched(subject: string, sinceMs: number, targetOffset = 10): WatchedTranslation {
  return {
    subject,
    event: OffsetCommitted.fromPartial({ group: 'g', topic: 't', partition: 0 }),
    revision: 0,
    targetOffset,
    highWatermark: 100,
    sinceMs,
    looks: 0,
    nextLookMs: sinceMs,
  };
}

describe('RevisionWatch', () => {
  it('watches revisable translations only, one per key, within the window since the first translation', () => {
    const watch = new RevisionWatch({ windowMs: 1_000, intervalMs: 100, maxWatched: 10 });
    watch.note(watched('a', 0), true);
    watch.note(watched('b', 0), false);
    watch.note(watched('c', 500), true);
    expect(watch.due(1_000).map((w) => w.subject)).toEqual(['a', 'c']);
    // A newer translation of the key that is not revisable ends its watch; the window ends the rest.
    watch.note(watched('c', 900), false);
    expect(watch.due(1_001).map((w) => w.subject)).toEqual([]);
    expect(watch.size).toBe(0);
  });

  it('keeps at most maxWatched, dropping the oldest; tells whether an entry is still the watched one', () => {
    const watch = new RevisionWatch({ windowMs: 1_000, intervalMs: 100, maxWatched: 2 });
    const a = watched('a', 0);
    watch.note(a, true);
    watch.note(watched('b', 0), true);
    expect(watch.isWatched(a)).toBe(true);
    watch.note(watched('c', 0), true);
    expect(watch.due(0).map((w) => w.subject)).toEqual(['b', 'c']);
    expect(watch.isWatched(a)).toBe(false);
    watch.forget('b');
    expect(watch.due(0).map((w) => w.subject)).toEqual(['c']);
  });

  it('looks at a translation again after the interval, doubling after each look up to 32 intervals', () => {
    expect([0, 1, 2, 3, 6, 7, 20].map((looks) => nextLookMs(1_000, looks, 100))).toEqual([
      1_100, 1_100, 1_200, 1_400, 4_200, 4_200, 4_200,
    ]);
    const watch = new RevisionWatch({ windowMs: 10_000, intervalMs: 100, maxWatched: 10 });
    const entry = watch.first('a', watched('a', 0).event, { targetOffset: 5, highWatermark: 50 }, 0);
    watch.note(entry, true);
    expect(watch.due(99)).toEqual([]);
    expect(watch.due(100)).toEqual([entry]);
    const again = watch.looked(entry, { highWatermark: 60 }, 100);
    watch.note(again, true);
    expect(again).toMatchObject({ looks: 1, nextLookMs: 200, highWatermark: 60, targetOffset: 5 });
    expect(watch.due(199)).toEqual([]);
  });

  it('watches nothing with a window of 0, and revises only to a later offset', () => {
    const watch = new RevisionWatch({ windowMs: 0, intervalMs: 100, maxWatched: 10 });
    watch.note(watched('a', 0), true);
    expect(watch.size).toBe(0);
    expect(isForwardRevision(watched('a', 0, 10), 11)).toBe(true);
    expect(isForwardRevision(watched('a', 0, 10), 10)).toBe(false);
    expect(isForwardRevision(watched('a', 0, 10), 9)).toBe(false);
  });
});
