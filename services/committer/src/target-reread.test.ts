import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatCommitMetadata, type Version } from '@offsetsync/contracts';
import type { AppliedRecord } from './applied-record.js';
import { checkBeforeCommit, readAfterCommit, recommitBlocked, sameCommit } from './target-reread.js';

const SOURCE = 'src';
const NOW = 1_700_000_000_000;
const v = (offsetsPartition: number, offsetsOffset: number): Version => ({ offsetsPartition, offsetsOffset });
const mark = (version: Version, origin = SOURCE) => formatCommitMetadata({ origin, ...version }, '');
const record = (version: Version, targetOffset: number): AppliedRecord => ({
  version,
  targetOffset,
  appliedAtMs: NOW - 10,
  sourceCommitTimestampMs: NOW - 20,
});

const lastCommitted = record(v(1, 10), 40);
const reserved = record(v(1, 20), 50);
const seen = { offset: 40, metadata: mark(v(1, 10)) };

describe('checkBeforeCommit: the target read again right before the commit', () => {
  it('commits when the target shows what the decision saw', () => {
    for (const at of [seen, undefined, { offset: 33, metadata: '' }]) {
      expect(
        checkBeforeCommit({ source: SOURCE, reserved, lastCommitted, seen: at, current: at, nowMs: NOW }),
      ).toEqual({ kind: 'commit' });
    }
  });

  it('keeps an application commit that arrived after the decision and records the ownership from now', () => {
    fc.assert(
      fc.property(
        fc.nat(10_000).filter((o) => o !== lastCommitted.targetOffset),
        fc.constantFrom<string | null>('', null, 'app-metadata'),
        (offset, metadata) => {
          const check = checkBeforeCommit({
            source: SOURCE,
            reserved,
            lastCommitted,
            seen,
            current: { offset, metadata },
            nowMs: NOW,
          });
          expect(check).toMatchObject({ kind: 'skip', reason: 'TARGET_AHEAD', ownedSinceMs: NOW });
          expect(check.kind === 'skip' && check.detail).toMatch(
            new RegExp(`the application committed offset ${offset} on the target after offsetsync decided`),
          );
        },
      ),
    );
  });

  it("takes the application commit's real time when a collector on the target reported it", () => {
    const check = checkBeforeCommit({
      source: SOURCE,
      reserved,
      lastCommitted,
      seen,
      current: { offset: 77, metadata: '', commitTimestampMs: NOW - 3 },
      nowMs: NOW,
    });
    expect(check).toMatchObject({ kind: 'skip', reason: 'TARGET_AHEAD', ownedSinceMs: NOW - 3 });
  });

  it('an application that re-committed the offset offsetsync gave it has not taken the position over', () => {
    const check = checkBeforeCommit({
      source: SOURCE,
      reserved,
      lastCommitted,
      seen,
      current: { offset: 40, metadata: '' },
      nowMs: NOW,
    });
    expect(check).toEqual({ kind: 'commit' });
  });

  it("skips as stale when offsetsync's mark now holds a newer version; commits over an older or foreign one", () => {
    const newer = checkBeforeCommit({
      source: SOURCE,
      reserved,
      lastCommitted,
      seen,
      current: { offset: 60, metadata: mark(v(1, 30)) },
      nowMs: NOW,
    });
    expect(newer).toMatchObject({ kind: 'skip', reason: 'STALE_VERSION' });
    expect(newer.kind === 'skip' && newer.detail).toMatch(/commit mark holds a newer version/);
    for (const metadata of [mark(v(1, 15)), mark(v(1, 30), 'other'), mark(v(1, 20))]) {
      expect(
        checkBeforeCommit({
          source: SOURCE,
          reserved,
          lastCommitted,
          seen,
          current: { offset: 50, metadata },
          nowMs: NOW,
        }),
      ).toEqual({ kind: 'commit' });
    }
  });

  it('commits when the commit disappeared (offsets deleted) since the decision', () => {
    expect(
      checkBeforeCommit({ source: SOURCE, reserved, lastCommitted, seen, current: undefined, nowMs: NOW }),
    ).toEqual({ kind: 'commit' });
  });
});

describe('readAfterCommit: the target read again right after the commit', () => {
  it("tells offsetsync's commit, an application commit after it, and anything else apart", () => {
    expect(readAfterCommit(SOURCE, reserved, { offset: 50, metadata: mark(v(1, 20)) })).toEqual({
      kind: 'as-committed',
    });
    expect(readAfterCommit(SOURCE, reserved, { offset: 51, metadata: '' })).toMatchObject({
      kind: 'application-commit',
      offset: 51,
    });
    // Re-committing offsetsync's own position without consuming is not progress of the application.
    expect(readAfterCommit(SOURCE, reserved, { offset: 50, metadata: '' })).toEqual({ kind: 'other' });
    expect(readAfterCommit(SOURCE, reserved, { offset: 70, metadata: mark(v(1, 30)) })).toEqual({
      kind: 'other',
    });
    expect(readAfterCommit(SOURCE, reserved, undefined)).toEqual({ kind: 'other' });
  });
});

describe('recommitBlocked', () => {
  it("allows committing a newer reserved version again over offsetsync's older commit only", () => {
    expect(recommitBlocked(SOURCE, reserved, { offset: 40, metadata: mark(v(1, 10)) })).toBeUndefined();
    expect(recommitBlocked(SOURCE, reserved, undefined)).toBeUndefined();
    expect(recommitBlocked(SOURCE, reserved, { offset: 60, metadata: mark(v(1, 30)) })).toMatch(
      /commit mark holds a newer version/,
    );
    expect(recommitBlocked(SOURCE, reserved, { offset: 45, metadata: '' })).toMatch(
      /the application committed offset 45/,
    );
  });
});

describe('sameCommit', () => {
  it('compares offset and metadata, a missing metadata being empty', () => {
    expect(sameCommit({ offset: 1, metadata: null }, { offset: 1, metadata: '' })).toBe(true);
    expect(sameCommit({ offset: 1, metadata: 'a' }, { offset: 1, metadata: 'b' })).toBe(false);
    expect(sameCommit(undefined, { offset: 1, metadata: '' })).toBe(false);
    expect(sameCommit(undefined, undefined)).toBe(true);
  });
});
