import { describe, expect, it } from 'vitest';
import { BootstrapLedger, counts, forEachLimited, interleave, verdictOf } from './bootstrap-ledger.js';

const ledger = (rule: 'exact' | 'at-or-before'): BootstrapLedger =>
  new BootstrapLedger(rule, ['g0', 'g1'], 2, (g, p) => 10 * (g + 1) + p, 1_000);

describe('verdictOf and counts', () => {
  it('tells exact, behind, ahead and missing apart', () => {
    expect(verdictOf(5, 5)).toBe('exact');
    expect(verdictOf(5, 3)).toBe('behind');
    expect(verdictOf(5, 6)).toBe('ahead');
    expect(verdictOf(5, undefined)).toBe('missing');
  });

  it('counts behind as applied only under at-or-before, and ahead or missing never', () => {
    expect(counts('exact', 'exact')).toBe(true);
    expect(counts('exact', 'behind')).toBe(false);
    expect(counts('at-or-before', 'behind')).toBe(true);
    for (const rule of ['exact', 'at-or-before'] as const) {
      expect(counts(rule, 'ahead')).toBe(false);
      expect(counts(rule, 'missing')).toBe(false);
    }
  });
});

describe('BootstrapLedger', () => {
  it('a group is complete only once every partition is applied, timed from the start', () => {
    const l = ledger('exact');
    expect(l.observe(0, 1_500, (p) => (p === 0 ? 10 : undefined))).toBe(1);
    expect(l.openGroupIndexes()).toEqual([0, 1]);
    expect(l.observe(0, 2_000, (p) => 10 + p)).toBe(1);
    expect(l.observe(1, 2_500, (p) => 20 + p)).toBe(2);
    expect(l.complete).toBe(true);
    const s = l.summary();
    expect(s).toMatchObject({ group_partitions: 4, applied: 4, exact: 4, not_applied: 0 });
    expect(s.all_applied_ms).toBe(1_500);
    expect(s.p50_ms).toBe(1_000);
  });

  it('keeps the first applied time when a later poll sees the same commit', () => {
    const l = ledger('exact');
    l.observe(0, 1_200, (p) => 10 + p);
    expect(l.observe(0, 9_000, (p) => 10 + p)).toBe(0);
    l.observe(1, 1_300, (p) => 20 + p);
    expect(l.summary().all_applied_ms).toBe(300);
  });

  it('regression: a wrong expectation is reported as not applied, with where the target stands', () => {
    // The target stands one record before the expected position: not applied for offsetsync's rule.
    const l = ledger('exact');
    l.observe(0, 1_100, (p) => 10 + p - 1);
    l.observe(1, 1_100, (p) => 20 + p + 1);
    const s = l.summary();
    expect(s).toMatchObject({ applied: 0, not_applied: 4, behind: 2, ahead: 2, all_applied_ms: null });
    expect(s.p50_ms).toBeNull();
    expect(s).toMatchObject({ behind_records_p50: 1, behind_records_max: 1 });
    expect(s.not_applied_sample).toEqual([
      'g0/0 expected 10, at 9',
      'g0/1 expected 11, at 10',
      'g1/0 expected 20, at 21',
      'g1/1 expected 21, at 22',
    ]);
    expect(s.ahead_sample).toEqual(['g1/0 expected 20, at 21', 'g1/1 expected 21, at 22']);
    expect(l.complete).toBe(false);
  });

  it('at-or-before: behind counts as applied but is not exact; ahead never counts', () => {
    const l = ledger('at-or-before');
    l.observe(0, 1_100, (p) => (p === 0 ? 3 : 11));
    l.observe(1, 1_100, (p) => (p === 0 ? 21 : undefined));
    const s = l.summary();
    expect(s).toMatchObject({ applied: 2, exact: 1, behind: 1, ahead: 1, missing: 1, not_applied: 2 });
    expect(s).toMatchObject({ behind_records_p50: 7, behind_records_max: 7 });
    expect(l.openGroupIndexes()).toEqual([1]);
    expect(s.not_applied_sample).toEqual(['g1/0 expected 20, at 21', 'g1/1 expected 21, at none']);
  });

  it('verdict counts follow the last observation, applied times the first', () => {
    const l = ledger('at-or-before');
    l.observe(0, 1_100, () => 0);
    l.observe(0, 1_900, (p) => 10 + p);
    const s = l.summary();
    expect(s).toMatchObject({ applied: 2, exact: 2, behind: 0, missing: 2 });
    expect(s.p99_ms).toBe(100);
  });
});

describe('interleave', () => {
  it('visits the systems in turn, longer lists last', () => {
    expect(interleave<number | string>([[1, 2, 3], ['a'], [], ['x', 'y']])).toEqual([1, 'a', 'x', 2, 'y', 3]);
    expect(interleave([])).toEqual([]);
  });
});

describe('forEachLimited', () => {
  it('never runs more than the limit at once and visits every item once', async () => {
    let running = 0;
    let peak = 0;
    const seen: number[] = [];
    await forEachLimited(
      Array.from({ length: 50 }, (_, i) => i),
      4,
      async (item) => {
        running += 1;
        peak = Math.max(peak, running);
        await new Promise((resolve) => setTimeout(resolve, item % 3));
        seen.push(item);
        running -= 1;
      },
    );
    expect(peak).toBe(4);
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });
});
