import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareVersions } from '@offsetsync/contracts';
import { byGroup, coalesceByKey } from './translation-coalescer.js';

const itemArb = fc.record({
  key: fc.constantFrom('a', 'b', 'c', 'd'),
  group: fc.constantFrom('g1', 'g2'),
  version: fc.record({ offsetsPartition: fc.nat(2), offsetsOffset: fc.nat(20) }),
  translation: fc.record({ targetOffset: fc.nat(3) }),
  id: fc.nat(),
});

/** By version, then target offset (a version revised forward). */
type Item = typeof itemArb extends fc.Arbitrary<infer T> ? T : never;

function order(a: Item, b: Item): number {
  return compareVersions(a.version, b.version) || a.translation.targetOffset - b.translation.targetOffset;
}

describe('coalesceByKey', () => {
  it('keeps exactly the newest item per key and reports every other one with the item that replaced it', () => {
    fc.assert(
      fc.property(fc.array(itemArb, { maxLength: 40 }), (items) => {
        const { newest, superseded } = coalesceByKey(items);
        expect(newest.length + superseded.length).toBe(items.length);
        expect(new Set(newest.map((i) => i.key)).size).toBe(newest.length);
        expect(new Set(newest.map((i) => i.key))).toEqual(new Set(items.map((i) => i.key)));
        for (const kept of newest) {
          for (const other of items.filter((i) => i.key === kept.key)) {
            expect(order(kept, other)).toBeGreaterThanOrEqual(0);
          }
        }
        for (const { item, by } of superseded) {
          expect(by.key).toBe(item.key);
          expect(newest).toContain(by);
          expect(order(by, item)).toBeGreaterThanOrEqual(0);
        }
      }),
    );
  });

  it('keeps the first of equal versions and offsets, and the later offset of one version', () => {
    const first = {
      key: 'k',
      group: 'g',
      version: { offsetsPartition: 0, offsetsOffset: 1 },
      translation: { targetOffset: 5 },
      id: 1,
    };
    const again = { ...first, id: 2 };
    expect(coalesceByKey([first, again])).toEqual({
      newest: [first],
      superseded: [{ item: again, by: first }],
    });
    const revised = { ...first, translation: { targetOffset: 6 }, id: 3 };
    expect(coalesceByKey([revised, first])).toEqual({
      newest: [revised],
      superseded: [{ item: first, by: revised }],
    });
  });
});

describe('byGroup', () => {
  it('groups in order', () => {
    const items = [
      { group: 'a', n: 1 },
      { group: 'b', n: 2 },
      { group: 'a', n: 3 },
    ];
    expect([...byGroup(items)]).toEqual([
      ['a', [items[0], items[2]]],
      ['b', [items[1]]],
    ]);
  });
});
