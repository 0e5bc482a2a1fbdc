import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareVersions } from '@offsetsync/contracts';
import { byGroup, coalesceByKey } from './translation-coalescer.js';

const itemArb = fc.record({
  key: fc.constantFrom('a', 'b', 'c', 'd'),
  group: fc.constantFrom('g1', 'g2'),
  version: fc.record({ offsetsPartition: fc.nat(2), offsetsOffset: fc.nat(20) }),
  id: fc.nat(),
});

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
            expect(compareVersions(kept.version, other.version)).toBeGreaterThanOrEqual(0);
          }
        }
        for (const { item, by } of superseded) {
          expect(by.key).toBe(item.key);
          expect(newest).toContain(by);
          expect(compareVersions(by.version, item.version)).toBeGreaterThanOrEqual(0);
        }
      }),
    );
  });

  it('keeps the first of equal versions', () => {
    const first = { key: 'k', group: 'g', version: { offsetsPartition: 0, offsetsOffset: 1 }, id: 1 };
    const again = { ...first, id: 2 };
    expect(coalesceByKey([first, again])).toEqual({
      newest: [first],
      superseded: [{ item: again, by: first }],
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
