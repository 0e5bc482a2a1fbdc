import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { logBoundsVerdict, outOfBoundsDetail } from './log-bounds.js';

/** Bounds of a real log: 0 <= log start <= log end. */
const boundsArb = fc
  .tuple(fc.nat(1_000_000), fc.nat(1_000_000))
  .map(([a, b]) => ({ logStartOffset: Math.min(a, b), highWatermark: Math.max(a, b) }));

describe('logBoundsVerdict', () => {
  it('takes every offset from the log start up to and including the log end as within', () => {
    fc.assert(
      fc.property(boundsArb, fc.double({ min: 0, max: 1, noNaN: true }), (bounds, at) => {
        const offset =
          bounds.logStartOffset + Math.floor(at * (bounds.highWatermark - bounds.logStartOffset));
        expect(logBoundsVerdict(offset, bounds)).toBe('within');
        expect(logBoundsVerdict(bounds.logStartOffset, bounds)).toBe('within');
        expect(logBoundsVerdict(bounds.highWatermark, bounds)).toBe('within');
      }),
    );
  });

  it('never takes an offset past the log end or below the log start as within', () => {
    fc.assert(
      fc.property(boundsArb, fc.integer({ min: 1, max: 1_000_000 }), (bounds, by) => {
        expect(logBoundsVerdict(bounds.highWatermark + by, bounds)).toBe('above-end');
        if (bounds.logStartOffset - by >= 0)
          expect(logBoundsVerdict(bounds.logStartOffset - by, bounds)).toBe('below-start');
      }),
    );
  });

  it('keeps an offset within when the log grows, the guard of the cached log end', () => {
    fc.assert(
      fc.property(boundsArb, fc.nat(1_000_000), fc.nat(1_000_000), (bounds, offset, growth) => {
        if (logBoundsVerdict(offset, bounds) !== 'within') return;
        const grown = { ...bounds, highWatermark: bounds.highWatermark + growth };
        expect(logBoundsVerdict(offset, grown)).toBe('within');
      }),
    );
  });

  it('judges an empty log (start = end) to have exactly one valid position', () => {
    const empty = { logStartOffset: 5, highWatermark: 5 };
    expect([4, 5, 6].map((o) => logBoundsVerdict(o, empty))).toEqual(['below-start', 'within', 'above-end']);
  });
});

describe('outOfBoundsDetail', () => {
  it('names the offset, the bound it crossed and the partition', () => {
    const bounds = { logStartOffset: 10, highWatermark: 20 };
    expect(outOfBoundsDetail(25, 'above-end', bounds, { topic: 'orders', partition: 1 })).toBe(
      'target offset 25 is above the log end offset 20 of orders-1 on the target',
    );
    expect(outOfBoundsDetail(3, 'below-start', bounds, { topic: 'orders', partition: 1 })).toBe(
      'target offset 3 is below the log start offset 10 of orders-1 on the target',
    );
  });
});
