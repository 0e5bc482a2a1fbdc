import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countMove, formatMoveLine, formatPositions } from './move-report.js';

const ids = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `r${from + i}`);

describe('countMove', () => {
  it('is 0 and 0 when the target continues exactly where the source stopped', () => {
    expect(
      countMove({ sourceRecords: ids(0, 10), consumedOnSource: ids(0, 4), readOnTarget: ids(4, 10) }),
    ).toEqual({ replayed: 0, skipped: 0 });
  });

  it('counts every read of a record consumed on the source as replayed', () => {
    expect(
      countMove({ sourceRecords: ids(0, 10), consumedOnSource: ids(0, 4), readOnTarget: ids(2, 10) }),
    ).toEqual({ replayed: 2, skipped: 0 });
  });

  it('counts remaining records never read on the target as skipped', () => {
    expect(
      countMove({ sourceRecords: ids(0, 10), consumedOnSource: ids(0, 4), readOnTarget: ids(6, 10) }),
    ).toEqual({ replayed: 0, skipped: 2 });
  });

  it("counts a target record that is no copy of a remaining source record as replayed (the target's own)", () => {
    expect(
      countMove({ sourceRecords: ids(0, 3), consumedOnSource: [], readOnTarget: ['own', ...ids(0, 3)] }),
    ).toEqual({ replayed: 1, skipped: 0 });
  });

  it("never counts a replicator's duplicate of a remaining record, whatever the order", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 50 }),
        fc.integer({ min: 0, max: 50 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        (consumed, rest, duplicates) => {
          const remaining = ids(consumed, consumed + rest);
          const withDuplicates = [
            ...remaining,
            ...duplicates.flatMap((d) => remaining.slice(d % (rest + 1))),
          ];
          const shuffled = [...withDuplicates].reverse();
          expect(
            countMove({
              sourceRecords: ids(0, consumed + rest),
              consumedOnSource: ids(0, consumed),
              readOnTarget: shuffled,
            }),
          ).toEqual({ replayed: 0, skipped: 0 });
        },
      ),
    );
  });
});

describe('formatMoveLine', () => {
  it('is the line per target the sandbox test waits for', () => {
    expect(formatMoveLine('demo-app', 'cloud', { replayed: 0, skipped: 2 })).toBe(
      'moved group demo-app to cloud: replayed=0 skipped=2',
    );
  });
});

describe('formatPositions', () => {
  it('puts the source position and each target position side by side, with the topic on each', () => {
    expect(
      formatPositions(0, { cluster: 'source', topic: 'demo-orders', offset: 1103 }, [
        { cluster: 'target', topic: 'demo-orders', offset: 1203 },
        { cluster: 'cloud', topic: 'source.demo-orders', offset: 1353 },
      ]),
    ).toBe('partition 0: source demo-orders 1103 -> target demo-orders 1203, cloud source.demo-orders 1353');
  });
});
