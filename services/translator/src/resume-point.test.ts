// Where a group resumes, on small target windows written the ways at-least-once replicators write them.
// Records are named by letters; a name written twice is one source record copied twice, unless the
// source itself holds two identical records (then `distinctAround` is small).
import { describe, expect, it } from 'vitest';
import type { Anchor } from '@offsetsync/contracts';
import { recordFingerprint, type FetchedRecord } from '@offsetsync/kafka';
import { resumePoint, type ResumeWindow } from './resume-point.js';

const record = (name: string, offset: number): FetchedRecord => ({
  offset,
  timestampMs: 1000,
  timestampType: 'create-time',
  key: Buffer.from('k'),
  value: Buffer.from(name),
  headers: {},
});

const anchor = (name: string): Anchor => ({
  offset: 0,
  timestampMs: 1000,
  timestampType: 0,
  fingerprint: recordFingerprint(Buffer.from('k'), Buffer.from(name)),
  keySize: 1,
  valueSize: name.length,
});

/** The resume point of a group that consumed up to `last` (next: `next`) on a target written as `names`. */
function resume(names: string, last: string, next: string | undefined, options: Partial<ResumeWindow> = {}) {
  return resumePoint({
    records: names.split(' ').map(record),
    floorIndex: 0,
    last: anchor(last),
    next: next === undefined ? undefined : anchor(next),
    settleRecords: 100,
    reachesEnd: true,
    logStart: 0,
    distinctAround: 100,
    ...options,
  });
}

describe('resumePoint', () => {
  it('resumes right after the last consumed record when nothing was written twice', () => {
    expect(resume('a b c d', 'b', 'c')).toMatchObject({ kind: 'exact', offset: 2 });
  });

  it('resumes after the last copy of a run written again right after its first copy', () => {
    // a b c | a b c d: the group consumed a, b.
    expect(resume('a b c a b c d', 'b', 'c')).toMatchObject({ kind: 'exact', offset: 5 });
    // The run ends at the last consumed record: after its copies, at the next record.
    expect(resume('a b a b c', 'b', 'c')).toMatchObject({ kind: 'exact', offset: 4 });
  });

  it('resumes after the last copy when a copier restarts from an older position, even several times', () => {
    expect(resume('a b c d b c d e b c d e f', 'b', 'c')).toMatchObject({ kind: 'exact', offset: 9 });
  });

  it('starts after the first copy, inexact, when a retried batch lands after records it must not skip', () => {
    // a b c d | a b | e: c and d have no copy after the second b.
    expect(resume('a b c d a b e', 'b', 'c')).toMatchObject({ kind: 'inexact', offset: 2 });
  });

  it('skips copies of consumed records that come before the next record', () => {
    expect(resume('a b a c', 'b', 'c')).toMatchObject({ kind: 'exact', offset: 3 });
  });

  it('never takes a record identical to the next one for its copy when the source was not seen distinct', () => {
    // The source holds b c c' e with c' identical to c; the replicator wrote b again after c. Taking c' for
    // a copy of c would skip c.
    const window = 'a b c b c e';
    expect(resume(window, 'b', 'c', { distinctAround: 0 })).toMatchObject({ kind: 'inexact', offset: 2 });
    // Seen distinct by the collector: the same window is a rewrite of b c, resumed after the second b.
    expect(resume(window, 'b', 'c', { distinctAround: 100 })).toMatchObject({ kind: 'exact', offset: 4 });
  });

  it('starts at the first of two identical anchors, inexact', () => {
    expect(resume('a b b c', 'b', 'b')).toMatchObject({ kind: 'inexact', offset: 1 });
  });

  it('starts at the log start when the copies are close to it (earlier copies may have been removed)', () => {
    const records = 'x b a c'.split(' ').map((n, i) => record(n, i + 5));
    expect(resume('', 'b', 'c', { records, logStart: 5, settleRecords: 10 })).toMatchObject({
      kind: 'inexact',
      offset: 5,
    });
  });

  it('finds nothing when no copy of an anchor is at or after the floor', () => {
    expect(resume('b c d', 'b', 'c', { floorIndex: 2 })).toEqual({ kind: 'no-match' });
  });
});
