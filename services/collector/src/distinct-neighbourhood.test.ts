import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { distinctAround } from './distinct-neighbourhood.js';

/** Records at offsets from `from` on, named by their content (the same name: identical records). */
const records = (names: string, from = 0) =>
  names.split(' ').map((name, i) => ({ offset: from + i, timestampMs: 7, fingerprint: name }));

/** The answer the slow way: the largest n whose 2n records around c are pairwise distinct. */
function slow(names: string[], first: number, limit: number, fromLogStart: boolean): number {
  const before = fromLogStart ? limit : first;
  for (let n = Math.min(limit, before, names.length - first); n > 0; n--) {
    const around = names.slice(Math.max(0, first - n), first + n);
    if (new Set(around).size === around.length) return n;
  }
  return 0;
}

describe('distinctAround', () => {
  it('counts the distinct records on each side of the commit, up to the nearest identical pair', () => {
    // c at offset 3 (record d): b and b' are 2 before and 2 after it.
    expect(distinctAround(records('a b c d b e f'), 3, 10, { fromLogStart: true })).toBe(1);
    expect(distinctAround(records('a b c d e f g'), 3, 10, { fromLogStart: true })).toBe(4);
    expect(distinctAround(records('a b c d e f g'), 3, 2, { fromLogStart: true })).toBe(2);
  });

  it('claims nothing past the records read after the commit, nor before them unless they start the log', () => {
    expect(distinctAround(records('a b c'), 3, 10, { fromLogStart: true })).toBe(0);
    expect(distinctAround(records('c d e f', 10), 11, 10, { fromLogStart: false })).toBe(1);
  });

  it('is 0 when the records at the commit are identical (a retried send)', () => {
    expect(distinctAround(records('a b b c'), 2, 10, { fromLogStart: true })).toBe(0);
  });

  it('agrees with counting the slow way', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            name: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'),
            t: fc.constantFrom(7, 8),
          }),
          { minLength: 1, maxLength: 30 },
        ),
        fc.nat(),
        fc.integer({ min: 0, max: 20 }),
        fc.boolean(),
        (named, at, limit, fromLogStart) => {
          const first = at % (named.length + 1);
          const read = named.map(({ name, t }, i) => ({ offset: i, timestampMs: t, fingerprint: name }));
          // Identical: the same content and the same timestamp.
          const names = named.map(({ name, t }) => `${t}:${name}`);
          expect(distinctAround(read, first, limit, { fromLogStart })).toBe(
            slow(names, first, limit, fromLogStart),
          );
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
