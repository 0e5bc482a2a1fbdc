import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareVersions, formatCommitMetadata, type Version } from '@offsetsync/contracts';
import type { AppliedRecord } from './applied-record.js';
import {
  decideApply,
  holdsReservation,
  isApplicationCommit,
  newerReservation,
  restoredRecord,
  type TargetCommit,
  type Translation,
} from './apply-decision.js';

const SOURCE = 'src';
const NOW = 1_700_000_000_000;

const mark = (version: Version, origin = SOURCE) =>
  formatCommitMetadata(
    { origin, offsetsPartition: version.offsetsPartition, offsetsOffset: version.offsetsOffset },
    '',
  );

const v = (offsetsPartition: number, offsetsOffset: number): Version => ({ offsetsPartition, offsetsOffset });

function applied(version: Version, targetOffset: number, extra: Partial<AppliedRecord> = {}): AppliedRecord {
  return { version, targetOffset, appliedAtMs: NOW - 1000, sourceCommitTimestampMs: NOW - 2000, ...extra };
}

function translation(
  version: Version,
  targetOffset: number,
  sourceCommitTimestampMs = NOW - 500,
): Translation {
  return { version, targetOffset, sourceCommitTimestampMs };
}

const versionArb = fc.record({
  offsetsPartition: fc.integer({ min: 0, max: 3 }),
  offsetsOffset: fc.integer({ min: 0, max: 60 }),
});

/** Distinct versions, each with its own target offset (so later versions may well have lower offsets). */
const translationsArb = fc.uniqueArray(
  fc.record({
    version: versionArb,
    targetOffset: fc.integer({ min: 0, max: 1_000 }),
    sourceCommitTimestampMs: fc.integer({ min: NOW - 100_000, max: NOW - 1 }),
  }),
  {
    minLength: 1,
    maxLength: 25,
    selector: (t) => `${t.version.offsetsPartition}:${t.version.offsetsOffset}`,
  },
);

/** Every translation at least once, some several times, in any order. */
const deliveriesArb = translationsArb.chain((translations) =>
  fc.array(fc.constantFrom(...translations), { maxLength: 30 }).chain((duplicates) =>
    fc
      .shuffledSubarray([...translations, ...duplicates], {
        minLength: translations.length + duplicates.length,
      })
      .map((deliveries) => ({ translations, deliveries })),
  ),
);

function newest(translations: readonly Translation[]): Translation {
  return translations.reduce((a, b) => (compareVersions(b.version, a.version) > 0 ? b : a));
}

/** Runs deliveries through the decision the way one committer does, with the target as the only writer. */
function simulate(deliveries: readonly Translation[]) {
  let stored: AppliedRecord | undefined;
  let target: TargetCommit | undefined;
  const committed: Version[] = [];
  for (const t of deliveries) {
    const decision = decideApply({
      source: SOURCE,
      translation: t,
      stored,
      targetCommit: target,
      nowMs: NOW,
    });
    if (decision.kind === 'apply') {
      stored = decision.record;
      target = { offset: decision.record.targetOffset, metadata: mark(decision.record.version!) };
      committed.push(decision.record.version!);
    } else if (decision.kind === 'skip' && decision.record !== undefined) {
      stored = decision.record;
    }
  }
  return { stored, target, committed };
}

describe('compareVersions (contracts), the order the decision relies on', () => {
  it('orders by offsets partition, then offset', () => {
    expect(compareVersions(v(1, 5), v(1, 7))).toBeLessThan(0);
    expect(compareVersions(v(2, 0), v(1, 900))).toBeGreaterThan(0);
    expect(compareVersions(v(3, 3), v(3, 3))).toBe(0);
  });
});

describe('decideApply: never stale state (invariant 2)', () => {
  it('ends on the newest version and its offset for any delivery order with duplicates', () => {
    fc.assert(
      fc.property(deliveriesArb, ({ translations, deliveries }) => {
        const { stored, target, committed } = simulate(deliveries);
        const max = newest(translations);
        expect(stored?.version).toEqual(max.version);
        expect(target?.offset).toBe(max.targetOffset);
        // Every commit is newer than the one before: nothing older is ever written after something newer.
        for (let i = 1; i < committed.length; i++) {
          expect(compareVersions(committed[i], committed[i - 1])).toBeGreaterThan(0);
        }
      }),
    );
  });

  it('applies a rewind: a newer version with a lower offset', () => {
    fc.assert(
      fc.property(
        versionArb,
        fc.integer({ min: 1, max: 100 }),
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 10_000 }),
        (older, step, olderOffset, back) => {
          const newer = v(older.offsetsPartition, older.offsetsOffset + step);
          const rewound = Math.max(0, olderOffset - back);
          const decision = decideApply({
            source: SOURCE,
            translation: translation(newer, rewound),
            stored: applied(older, olderOffset),
            targetCommit: { offset: olderOffset, metadata: mark(older) },
            nowMs: NOW,
          });
          expect(decision).toMatchObject({
            kind: 'apply',
            reserve: true,
            record: { version: newer, targetOffset: rewound },
          });
        },
      ),
    );
  });

  it('skips an older version as stale', () => {
    const decision = decideApply({
      source: SOURCE,
      translation: translation(v(4, 10), 50),
      stored: applied(v(4, 20), 40),
      targetCommit: { offset: 40, metadata: mark(v(4, 20)) },
      nowMs: NOW,
    });
    expect(decision).toMatchObject({ kind: 'skip', reason: 'STALE_VERSION' });
    expect(decision.kind === 'skip' && decision.record).toBeUndefined();
  });

  it('reports a redelivered version the target already holds without committing it again', () => {
    const stored = applied(v(4, 20), 40);
    const decision = decideApply({
      source: SOURCE,
      translation: translation(v(4, 20), 40),
      stored,
      targetCommit: { offset: 40, metadata: mark(v(4, 20)) },
      nowMs: NOW,
    });
    expect(decision).toEqual({ kind: 'already-applied', record: stored });
  });

  it('commits a reserved version again when the target lacks it (crash between reservation and commit)', () => {
    const stored = applied(v(4, 20), 40);
    for (const targetCommit of [undefined, { offset: 30, metadata: mark(v(4, 19)) }]) {
      expect(
        decideApply({
          source: SOURCE,
          translation: translation(v(4, 20), 40),
          stored,
          targetCommit,
          nowMs: NOW,
        }),
      ).toEqual({ kind: 'apply', record: stored, reserve: false });
    }
  });

  it('revises a version forward only: the same version with a later offset is applied, with an earlier one skipped', () => {
    const stored = applied(v(4, 20), 40);
    const targetCommit = { offset: 40, metadata: mark(v(4, 20)) };
    const later = decideApply({
      source: SOURCE,
      translation: translation(v(4, 20), 41),
      stored,
      targetCommit,
      nowMs: NOW,
    });
    expect(later).toMatchObject({
      kind: 'apply',
      reserve: true,
      record: { version: v(4, 20), targetOffset: 41 },
    });
    const earlier = decideApply({
      source: SOURCE,
      translation: translation(v(4, 20), 39),
      stored,
      targetCommit,
      nowMs: NOW,
    });
    expect(earlier).toMatchObject({ kind: 'skip', reason: 'STALE_VERSION' });
  });

  it("does not take another source's mark for its own", () => {
    const decision = decideApply({
      source: SOURCE,
      translation: translation(v(4, 20), 40),
      stored: applied(v(4, 20), 40),
      targetCommit: { offset: 40, metadata: mark(v(4, 20), 'other') },
      nowMs: NOW,
    });
    expect(decision.kind).toBe('apply');
  });
});

describe('decideApply: the target is its own floor (invariant 7)', () => {
  /**
   * Like simulate, but KV is lost (the record gone) before the deliveries `losses` names: the bucket was
   * deleted or reset and the streams replay.
   */
  function simulateWithLosses(deliveries: readonly Translation[], losses: ReadonlySet<number>) {
    let stored: AppliedRecord | undefined;
    let target: TargetCommit | undefined;
    const committed: Version[] = [];
    deliveries.forEach((t, i) => {
      if (losses.has(i)) stored = undefined;
      const decision = decideApply({
        source: SOURCE,
        translation: t,
        stored,
        targetCommit: target,
        nowMs: NOW,
      });
      if (decision.kind === 'apply') {
        stored = decision.record;
        target = { offset: decision.record.targetOffset, metadata: mark(decision.record.version!) };
        committed.push(decision.record.version!);
      } else if (decision.kind === 'skip' && decision.record !== undefined) {
        stored = decision.record;
      }
    });
    return { target, committed };
  }

  it('never commits an older version after a newer one, however often KV is lost, and ends on the newest', () => {
    fc.assert(
      fc.property(
        deliveriesArb.chain(({ translations, deliveries }) =>
          fc
            .uniqueArray(fc.nat(Math.max(0, deliveries.length - 1)), { maxLength: deliveries.length })
            .map((losses) => ({ translations, deliveries, losses: new Set(losses) })),
        ),
        ({ translations, deliveries, losses }) => {
          const { target, committed } = simulateWithLosses(deliveries, losses);
          // A version the target holds may be committed once more after a loss (that rebuilds KV), never
          // an older one.
          for (let i = 1; i < committed.length; i++) {
            expect(compareVersions(committed[i], committed[i - 1])).toBeGreaterThanOrEqual(0);
          }
          const max = newest(translations);
          expect(target).toEqual({ offset: max.targetOffset, metadata: mark(max.version) });
        },
      ),
    );
  });

  it("skips a version older than the target's mark as stale when KV has no record", () => {
    const decision = decideApply({
      source: SOURCE,
      translation: translation(v(4, 10), 50),
      stored: undefined,
      targetCommit: { offset: 40, metadata: mark(v(4, 20)) },
      nowMs: NOW,
    });
    expect(decision).toMatchObject({ kind: 'skip', reason: 'STALE_VERSION' });
    expect(decision.kind === 'skip' && decision.detail).toMatch(
      /version 4:10 is older than version 4:20 .*the target's commit mark holds a newer version/,
    );
    expect(decision.kind === 'skip' && decision.record).toBeUndefined();
  });

  it('skips a version older than the mark although KV holds an older record (a commit that landed despite its error)', () => {
    // The commit of 4:20 returned an error but reached the broker: its reservation was put back to 4:5.
    const decision = decideApply({
      source: SOURCE,
      translation: translation(v(4, 10), 50),
      stored: applied(v(4, 5), 30),
      targetCommit: { offset: 40, metadata: mark(v(4, 20)) },
      nowMs: NOW,
    });
    expect(decision).toMatchObject({ kind: 'skip', reason: 'STALE_VERSION' });
  });

  it('never revises the marked version backwards, and commits it again (rebuilding KV) when it is the same', () => {
    const other = decideApply({
      source: SOURCE,
      translation: translation(v(4, 20), 39),
      stored: undefined,
      targetCommit: { offset: 40, metadata: mark(v(4, 20)) },
      nowMs: NOW,
    });
    expect(other).toMatchObject({ kind: 'skip', reason: 'STALE_VERSION' });
    expect(other.kind === 'skip' && other.detail).toMatch(
      /already committed on the target with target offset 40/,
    );
    expect(
      decideApply({
        source: SOURCE,
        translation: translation(v(4, 20), 40),
        stored: undefined,
        targetCommit: { offset: 40, metadata: mark(v(4, 20)) },
        nowMs: NOW,
      }),
    ).toMatchObject({ kind: 'apply', reserve: true, record: { version: v(4, 20), targetOffset: 40 } });
  });

  it("takes no floor from another origin's mark and applies a newer version over the mark", () => {
    for (const [version, metadata] of [
      [v(4, 10), mark(v(4, 20), 'other')],
      [v(4, 21), mark(v(4, 20))],
    ] as const) {
      expect(
        decideApply({
          source: SOURCE,
          translation: translation(version, 50),
          stored: undefined,
          targetCommit: { offset: 40, metadata },
          nowMs: NOW,
        }).kind,
      ).toBe('apply');
    }
  });
});

describe('decideApply: the target owns what the application committed there (invariant 3)', () => {
  it('detects an unmarked commit that differs from what offsetsync committed', () => {
    const stored = applied(v(1, 1), 10);
    expect(isApplicationCommit({ offset: 12, metadata: '' }, stored)).toBe(true);
    expect(isApplicationCommit({ offset: 12, metadata: null }, undefined)).toBe(true);
    // The application re-committed offsetsync's own position: not progress of its own.
    expect(isApplicationCommit({ offset: 10, metadata: '' }, stored)).toBe(false);
    expect(isApplicationCommit({ offset: 12, metadata: mark(v(1, 1)) }, stored)).toBe(false);
    expect(isApplicationCommit(undefined, stored)).toBe(false);
  });

  it("uses the application's real commit time when a collector on the target reported it (bidirectional links)", () => {
    // The application committed on this cluster long ago, then moved away and committed elsewhere later:
    // that later commit comes back here and must win, though offsetsync only now sees the old commit.
    const old = { offset: 40, metadata: '', commitTimestampMs: NOW - 60_000 };
    const back = translation(v(0, 7), 55, NOW - 10_000);
    expect(
      decideApply({ source: SOURCE, translation: back, stored: undefined, targetCommit: old, nowMs: NOW })
        .kind,
    ).toBe('apply');
    // A source commit older than the application's own commit here is still skipped, and nothing is recorded.
    const stale = translation(v(0, 8), 30, NOW - 90_000);
    expect(
      decideApply({ source: SOURCE, translation: stale, stored: undefined, targetCommit: old, nowMs: NOW }),
    ).toMatchObject({
      kind: 'skip',
      reason: 'TARGET_AHEAD',
    });
    expect(
      decideApply({ source: SOURCE, translation: stale, stored: undefined, targetCommit: old, nowMs: NOW }),
    ).not.toHaveProperty('record');
  });

  it('skips source commits up to the detection time and applies the first later one', () => {
    fc.assert(
      fc.property(
        fc.option(fc.record({ version: versionArb, targetOffset: fc.nat(1000) }), { nil: undefined }),
        fc.nat(1000),
        fc.integer({ min: -50_000, max: 50_000 }),
        fc.integer({ min: 1, max: 60_000 }),
        fc.integer({ min: -50_000, max: 50_000 }),
        (previous, appOffset, firstDelta, later, secondDelta) => {
          const stored =
            previous === undefined ? undefined : applied(previous.version, previous.targetOffset);
          fc.pre(appOffset !== (stored?.targetOffset ?? -1));
          const appCommit = { offset: appOffset, metadata: '' };
          const base = stored?.version ?? v(0, 0);
          const first = translation(v(base.offsetsPartition, base.offsetsOffset + 1), 500, NOW + firstDelta);
          const decision = decideApply({
            source: SOURCE,
            translation: first,
            stored,
            targetCommit: appCommit,
            nowMs: NOW,
          });
          if (first.sourceCommitTimestampMs <= NOW) {
            expect(decision).toMatchObject({
              kind: 'skip',
              reason: 'TARGET_AHEAD',
              record: { targetOwnedSinceMs: NOW },
            });
            if (decision.kind !== 'skip' || decision.record === undefined) return;
            // The applied version is kept: the ownership does not count as applying anything.
            expect(decision.record.version).toEqual(stored?.version ?? null);

            // Later, the bound stays the first detection time, whatever the clock says now.
            const second = translation(
              v(base.offsetsPartition, base.offsetsOffset + 2),
              600,
              NOW + secondDelta,
            );
            const next = decideApply({
              source: SOURCE,
              translation: second,
              stored: decision.record,
              targetCommit: appCommit,
              nowMs: NOW + later,
            });
            if (second.sourceCommitTimestampMs <= NOW) {
              expect(next).toMatchObject({ kind: 'skip', reason: 'TARGET_AHEAD' });
              expect(next.kind === 'skip' && next.record).toBe(undefined);
            } else {
              expect(next).toMatchObject({
                kind: 'apply',
                reserve: true,
                record: { version: second.version },
              });
              expect(next.kind === 'apply' && next.record.targetOwnedSinceMs).toBe(undefined);
            }
          } else {
            expect(decision).toMatchObject({
              kind: 'apply',
              record: { version: first.version, targetOffset: 500 },
            });
          }
        },
      ),
    );
  });

  it('checks staleness before ownership', () => {
    const decision = decideApply({
      source: SOURCE,
      translation: translation(v(0, 3), 5, NOW + 1000),
      stored: applied(v(0, 9), 7, { targetOwnedSinceMs: NOW - 10 }),
      targetCommit: { offset: 99, metadata: '' },
      nowMs: NOW,
    });
    expect(decision).toMatchObject({ kind: 'skip', reason: 'STALE_VERSION' });
  });
});

describe('restoring after a failed commit', () => {
  it('puts the previous record back, keeping an ownership recorded meanwhile', () => {
    const previous = applied(v(1, 1), 10);
    const reserved = applied(v(1, 2), 20);
    expect(restoredRecord(previous, reserved)).toEqual(previous);
    expect(restoredRecord(previous, { ...reserved, targetOwnedSinceMs: 5 })).toEqual({
      ...previous,
      targetOwnedSinceMs: 5,
    });
    expect(
      restoredRecord({ ...previous, targetOwnedSinceMs: 3 }, { ...reserved, targetOwnedSinceMs: 5 }),
    ).toEqual({
      ...previous,
      targetOwnedSinceMs: 3,
    });
    expect(restoredRecord(undefined, reserved)).toBeUndefined();
    expect(restoredRecord(undefined, { ...reserved, targetOwnedSinceMs: 5 })).toMatchObject({
      version: null,
      targetOffset: -1,
      targetOwnedSinceMs: 5,
    });
  });

  it('recognises its own reservation and a newer one', () => {
    const reserved = applied(v(1, 2), 20);
    expect(holdsReservation({ ...reserved, appliedAtMs: 1, targetOwnedSinceMs: 9 }, reserved)).toBe(true);
    expect(holdsReservation(applied(v(1, 3), 20), reserved)).toBe(false);
    expect(holdsReservation(undefined, reserved)).toBe(false);
    expect(newerReservation(applied(v(1, 3), 5), v(1, 2))).toMatchObject({ version: v(1, 3) });
    expect(newerReservation(applied(v(1, 2), 5), v(1, 2))).toBeUndefined();
    expect(newerReservation(applied(v(1, 3), 5, { targetOwnedSinceMs: 1 }), v(1, 2))).toBeUndefined();
  });
});
