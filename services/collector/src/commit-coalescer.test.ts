import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { coalesce, type VersionedRecord } from './commit-coalescer.js';

function commit(group: string, partition: number, offset: number, at: number): VersionedRecord {
  return {
    record: {
      kind: 'offset-commit',
      keyType: 1,
      valueVersion: 3,
      group,
      topic: 't',
      partition,
      offset,
      leaderEpoch: -1,
      metadata: '',
      commitTimestampMs: at,
      expireTimestampMs: -1,
    },
    version: { offsetsPartition: 0, offsetsOffset: at },
  };
}

describe('coalescing', () => {
  it('keeps exactly the newest record of every key', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            group: fc.constantFrom('a', 'b', 'c'),
            partition: fc.nat({ max: 3 }),
            offset: fc.nat(),
          }),
          {
            maxLength: 200,
          },
        ),
        (items) => {
          const records = items.map((item, i) => commit(item.group, item.partition, item.offset, i));
          const { kept, superseded } = coalesce(records);
          const expected = new Map<string, VersionedRecord>();
          for (const r of records)
            if (r.record.kind === 'offset-commit') expected.set(`${r.record.group}/${r.record.partition}`, r);
          expect(new Set(kept)).toEqual(new Set(expected.values()));
          expect(superseded).toBe(records.length - expected.size);
        },
      ),
    );
  });

  it('lets a later deletion replace a commit of the same partition', () => {
    const first = commit('g', 0, 5, 1);
    const deletion: VersionedRecord = {
      record: { kind: 'offset-deleted', keyType: 1, group: 'g', topic: 't', partition: 0 },
      version: { offsetsPartition: 0, offsetsOffset: 2 },
    };
    expect(coalesce([first, deletion]).kept).toEqual([deletion]);
  });

  it('keeps the newer version even when records arrive out of order', () => {
    const newer = commit('g', 0, 9, 10);
    const older = commit('g', 0, 5, 3);
    expect(coalesce([newer, older]).kept).toEqual([newer]);
  });
});
