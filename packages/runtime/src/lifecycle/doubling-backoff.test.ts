import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { doublingBackoffMs } from './doubling-backoff.js';

describe('doublingBackoffMs', () => {
  it('doubles from the minimum up to the cap', () => {
    const settings = { minMs: 100, maxMs: 1000 };
    expect([1, 2, 3, 4, 5, 100].map((n) => doublingBackoffMs(n, settings))).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ]);
  });

  it('stays within [min, max] and never shrinks with more attempts', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 5_000 }),
        (minMs, extra, n) => {
          const settings = { minMs, maxMs: minMs + extra };
          const delay = doublingBackoffMs(n, settings);
          expect(delay).toBeGreaterThanOrEqual(minMs);
          expect(delay).toBeLessThanOrEqual(settings.maxMs);
          expect(doublingBackoffMs(n + 1, settings)).toBeGreaterThanOrEqual(delay);
        },
      ),
    );
  });
});
