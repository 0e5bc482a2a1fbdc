import { describe, expect, it } from 'vitest';
import {
  addedTargetFailures,
  commitsRead,
  cpuDuring,
  type CollectorReading,
} from './added-target-verdict.js';

const reading = (eventsByOutcome: Record<string, number>, startedAtMs = 1_000): CollectorReading => ({
  startedAtMs,
  sentAtMs: startedAtMs + 60_000,
  eventsByOutcome,
});
const allExact = { group_partitions: 40, exact: 40, not_applied: 0, not_applied_sample: [] };

describe('commitsRead', () => {
  it('counts commits and deletions of included groups, not what is left out or superseded', () => {
    expect(commitsRead(reading({ committed: 40, deleted: 2, filtered: 500, superseded: 3 }))).toBe(42);
    expect(commitsRead(reading({}))).toBe(0);
  });
});

describe('addedTargetFailures', () => {
  it('passes when every group partition is exact and the collector passed on nothing more', () => {
    const before = reading({ committed: 40, filtered: 10 });
    // Group metadata and the collector's own commits keep coming: they do not count.
    const after = reading({ committed: 40, filtered: 25, group_metadata: 4 });
    expect(addedTargetFailures(allExact, before, after)).toEqual([]);
  });

  it('regression: fails when the collector passed on commits during the phase (read the topic again)', () => {
    const failures = addedTargetFailures(allExact, reading({ committed: 40 }), reading({ committed: 80 }));
    expect(failures).toEqual([
      'the collector passed on 40 commit records during the phase (40 before, 80 after): it read the offsets topic again',
    ]);
  });

  it('regression: a restarted collector fails, though its new counts may equal the old ones', () => {
    // A collector started again from the beginning of the topic counts every commit once more, from 0.
    const failures = addedTargetFailures(
      allExact,
      reading({ committed: 40 }, 1_000),
      reading({ committed: 40 }, 9_000),
    );
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatch(/restarted/);
  });

  it('fails when a group partition is not exact, naming one', () => {
    const failures = addedTargetFailures(
      { group_partitions: 40, exact: 39, not_applied: 1, not_applied_sample: ['g3/1 expected 12, at 11'] },
      reading({ committed: 40 }),
      reading({ committed: 40 }),
    );
    expect(failures).toEqual([
      '39 of 40 group partitions exact on the added target (for example g3/1 expected 12, at 11)',
    ]);
  });

  it('fails when a partition was exact once but is not at the last look', () => {
    const failures = addedTargetFailures(
      { group_partitions: 40, exact: 39, not_applied: 0, not_applied_sample: [] },
      reading({ committed: 40 }),
      reading({ committed: 40 }),
    );
    expect(failures).toEqual(['39 of 40 group partitions exact on the added target']);
  });
});

describe('cpuDuring', () => {
  it('subtracts the start, counts a process started meanwhile from 0 and gives null for one gone', () => {
    const atStart = new Map<string, number | undefined>([
      ['collector', 12.5],
      ['gone-before', undefined],
      ['gone-after', 3],
    ]);
    const atEnd = new Map<string, number | undefined>([
      ['collector', 13.754],
      ['new-translator', 2.346],
      ['gone-before', 4],
      ['gone-after', undefined],
    ]);
    expect(cpuDuring(atStart, atEnd)).toEqual({
      collector: 1.25,
      'new-translator': 2.35,
      'gone-before': null,
      'gone-after': null,
    });
  });
});
