import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { identityClasses, previousIdentical } from './identical-records.js';

interface R {
  t: number;
  c: string;
}

function probe(records: readonly R[], asked?: Set<number>) {
  return {
    timestampMs: (i: number) => records[i]!.t,
    contentKey: (i: number) => {
      asked?.add(i);
      return records[i]!.c;
    },
  };
}

/** The obvious answer: compare every earlier record. */
function model(records: readonly R[]): number[] {
  return records.map((r, i) => {
    for (let j = i - 1; j >= 0; j--) if (records[j]!.t === r.t && records[j]!.c === r.c) return j;
    return -1;
  });
}

const runs = fc.array(fc.record({ t: fc.integer({ min: 0, max: 6 }), c: fc.constantFrom('a', 'b', 'c') }), {
  maxLength: 60,
});

/** Runs stamped in order, as one producer stamps them: mostly increasing, some records sharing a timestamp. */
const orderedRuns = fc
  .array(fc.record({ step: fc.constantFrom(0, 1, 1, 1, 2), c: fc.constantFrom('a', 'b') }), { maxLength: 60 })
  .map((steps) => {
    let t = 0;
    return steps.map(({ step, c }) => ({ t: (t += step), c }));
  });

describe('previousIdentical', () => {
  it('finds the nearest earlier record with the same timestamp and content', () => {
    for (const arbitrary of [runs, orderedRuns]) {
      fc.assert(
        fc.property(arbitrary, (records) => {
          expect([...previousIdentical(records.length, probe(records))]).toEqual(model(records));
        }),
      );
    }
  });

  it('gives equal classes exactly to identical records', () => {
    fc.assert(
      fc.property(runs, (records) => {
        const classes = identityClasses(previousIdentical(records.length, probe(records)));
        records.forEach((a, i) =>
          records.forEach((b, j) => expect(classes[i] === classes[j]).toBe(a.t === b.t && a.c === b.c)),
        );
      }),
    );
  });

  it('looks at the content only of records that share a timestamp', () => {
    const records: R[] = [
      { t: 1, c: 'a' },
      { t: 2, c: 'a' },
      { t: 3, c: 'b' },
      { t: 2, c: 'a' },
    ];
    const asked = new Set<number>();
    expect([...previousIdentical(records.length, probe(records, asked))]).toEqual([-1, -1, -1, 1]);
    expect([...asked].sort()).toEqual([1, 3]);
  });
});
