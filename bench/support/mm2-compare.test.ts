import { describe, expect, it } from 'vitest';
import { countMove, matchCommits, recordId, sourceIndexOf, sourcePositionAt } from './mm2-compare.js';

describe('record ids', () => {
  it('round-trips and ignores foreign values', () => {
    expect(sourceIndexOf(recordId(2, 1503))).toBe(1503);
    expect(sourceIndexOf('own:2:5')).toBeUndefined();
    expect(sourceIndexOf(null)).toBeUndefined();
  });
});

describe('countMove', () => {
  // Target: 3 records of its own, then the copy of source records 0..9.
  const target = [undefined, undefined, undefined, ...Array.from({ length: 10 }, (_, i) => i)];

  it('counts nothing for the exact translation', () => {
    expect(
      countMove({ targetRecords: target, committed: 3 + 6, sourcePosition: 6, sourceRecords: 10 }),
    ).toEqual({ replayed: 0, skipped: 0 });
  });

  it('counts replays for a translation before the position, skips for one after', () => {
    expect(
      countMove({ targetRecords: target, committed: 3 + 2, sourcePosition: 6, sourceRecords: 10 }),
    ).toEqual({ replayed: 4, skipped: 0 });
    expect(
      countMove({ targetRecords: target, committed: 3 + 9, sourcePosition: 6, sourceRecords: 10 }),
    ).toEqual({ replayed: 0, skipped: 3 });
  });

  it("counts the target's own records as replays and a duplicate of a remaining record as neither", () => {
    expect(countMove({ targetRecords: target, committed: 1, sourcePosition: 0, sourceRecords: 10 })).toEqual({
      replayed: 2,
      skipped: 0,
    });
    expect(
      countMove({ targetRecords: [0, 1, 2, 2, 3], committed: 2, sourcePosition: 2, sourceRecords: 4 }),
    ).toEqual({ replayed: 0, skipped: 0 });
  });
});

describe('sourcePositionAt', () => {
  it('skips own records, and is the source end at the end of a complete copy', () => {
    expect(sourcePositionAt([undefined, 0, 1], 0, true, 2)).toBe(0);
    expect(sourcePositionAt([undefined, 0, 1], 3, true, 2)).toBe(2);
    expect(sourcePositionAt([undefined, 0, 1], 3, false, 2)).toBeUndefined();
  });
});

describe('matchCommits', () => {
  it('an exact system: latency to the first poll at the commit', () => {
    const result = matchCommits(
      [
        { atMs: 1_000, offset: 100 },
        { atMs: 3_000, offset: 200 },
      ],
      [
        { atMs: 900, sourcePosition: 50 },
        { atMs: 1_100, sourcePosition: 50 },
        { atMs: 1_250, sourcePosition: 100 },
        { atMs: 3_400, sourcePosition: 200 },
      ],
      50,
    );
    expect(result).toEqual([
      { offset: 100, latencyMs: 250, recordsBehind: 0 },
      { offset: 200, latencyMs: 400, recordsBehind: 0 },
    ]);
  });

  it('a system translating to an earlier sync, and a sync that shows several commits at once', () => {
    const result = matchCommits(
      [
        { atMs: 1_000, offset: 100 },
        { atMs: 2_000, offset: 200 },
        { atMs: 3_000, offset: 300 },
      ],
      [
        { atMs: 2_500, sourcePosition: 90 },
        { atMs: 9_000, sourcePosition: 280 },
      ],
      50,
    );
    expect(result).toEqual([
      { offset: 100, latencyMs: 1_500, recordsBehind: 10 },
      { offset: 200, latencyMs: 7_000, recordsBehind: 0 },
      { offset: 300, latencyMs: 6_000, recordsBehind: 20 },
    ]);
  });

  it('leaves a commit never shown without latency', () => {
    expect(matchCommits([{ atMs: 1, offset: 10 }], [{ atMs: 2, sourcePosition: 5 }], 5)).toEqual([
      { offset: 10, latencyMs: undefined, recordsBehind: undefined },
    ]);
  });
});
