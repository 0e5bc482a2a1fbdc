import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ApplyOutcome,
  PartitionSyncState,
  RefusalReason,
  SkipReason,
  TranslationOutcome,
  type Version,
} from '@offsetsync/contracts';
import {
  derivePartition,
  withApplied,
  withCommitted,
  withTranslated,
  type AppliedFact,
  type CommittedFact,
  type LinkPartitionFacts,
  type TranslatedFact,
} from './partition-status.js';

const KEY = { topic: 't', partition: 0 };
const v = (offset: number): Version => ({ offsetsPartition: 3, offsetsOffset: offset });
const committed = (version: number, offset: number): CommittedFact => ({
  version: v(version),
  offset,
  commitTimestampMs: 1_000 * version,
  observedAtMs: 1_000 * version + 5,
});
const translated = (
  version: number,
  sourceOffset: number,
  targetOffset: number,
  outcome = TranslationOutcome.TRANSLATION_OUTCOME_EXACT,
): TranslatedFact => ({
  version: v(version),
  sourceOffset,
  targetOffset,
  outcome,
  refusalReason: RefusalReason.REFUSAL_REASON_UNSPECIFIED,
  detail: '',
  attempts: 1,
  sourceCommitTimestampMs: 1_000 * version,
});
const applied = (
  version: number,
  sourceOffset: number,
  targetOffset: number,
  skipReason = SkipReason.SKIP_REASON_UNSPECIFIED,
): AppliedFact => ({
  version: v(version),
  sourceOffset,
  targetOffset: skipReason === SkipReason.SKIP_REASON_UNSPECIFIED ? targetOffset : -1,
  exact: true,
  outcome:
    skipReason === SkipReason.SKIP_REASON_UNSPECIFIED
      ? ApplyOutcome.APPLY_OUTCOME_APPLIED
      : ApplyOutcome.APPLY_OUTCOME_SKIPPED,
  skipReason,
  detail: '',
  sourceCommitTimestampMs: 1_000 * version,
  appliedAtMs: 1_000 * version + 50,
});

describe('derivePartition', () => {
  it('is SYNCED with nothing to replay once the exact translation of the latest commit is applied', () => {
    const link = withApplied(withTranslated({}, translated(1, 50, 50)), applied(1, 50, 50));
    const d = derivePartition(KEY, withCommitted({}, committed(1, 50)), undefined, link);
    expect(d.status).toMatchObject({
      state: PartitionSyncState.PARTITION_SYNC_STATE_SYNCED,
      sourceOffset: 50,
      targetOffset: 50,
      exact: true,
      lagMs: 0,
      replayIfMoved: 0,
    });
    expect(d.waitingSinceMs).toBeUndefined();
  });

  it("names the topic's copy on the target as the translation gave it, the source name when it is the same", () => {
    const source = withCommitted({}, committed(1, 50));
    const renamed = withTranslated({}, { ...translated(1, 50, 50), targetTopic: 'src.t' });
    expect(derivePartition(KEY, source, undefined, renamed).status).toMatchObject({
      topic: 't',
      targetTopic: 'src.t',
    });
    const same = withTranslated({}, { ...translated(1, 50, 50), targetTopic: '' });
    expect(derivePartition(KEY, source, undefined, same).status.targetTopic).toBe('t');
    expect(derivePartition(KEY, source, undefined, {}).status.targetTopic).toBe('t');
  });

  it('counts the target records up to the counterpart of a newer commit not applied yet', () => {
    let link: LinkPartitionFacts = withApplied(withTranslated({}, translated(1, 50, 50)), applied(1, 50, 50));
    link = withTranslated(link, translated(2, 150, 160));
    const d = derivePartition(KEY, withCommitted({}, committed(2, 150)), undefined, link);
    expect(d.status).toMatchObject({
      state: PartitionSyncState.PARTITION_SYNC_STATE_PENDING,
      targetOffset: 50,
      replayIfMoved: 110,
      lagMs: 1_000,
    });
    expect(d.status.reason).toBe('translated to 160; waiting for the committer');
    expect(d.waitingSinceMs).toBe(2_005);
  });

  it('on a link that observes, shows the offset it would commit and the replay or skip measured against the latest source commit', () => {
    const observed = (version: number, sourceOffset: number, targetOffset: number): AppliedFact => ({
      ...applied(version, sourceOffset, targetOffset),
      outcome: ApplyOutcome.APPLY_OUTCOME_OBSERVED,
    });
    let link = withApplied(withTranslated({}, translated(1, 50, 70)), observed(1, 50, 70));
    const up = derivePartition(KEY, withCommitted({}, committed(1, 50)), undefined, link).status;
    expect(up).toMatchObject({
      state: PartitionSyncState.PARTITION_SYNC_STATE_OBSERVED,
      targetOffset: -1,
      wouldCommitOffset: 70,
      replayIfMoved: 0,
      skipIfMoved: 0,
    });
    expect(up.reason).toBe('the link observes: would commit 70 on the target (exact); nothing committed');

    // The source moved on: measured against its newest commit's counterpart.
    link = withTranslated(link, translated(2, 150, 175));
    expect(derivePartition(KEY, withCommitted({}, committed(2, 150)), undefined, link).status).toMatchObject({
      wouldCommitOffset: 70,
      replayIfMoved: 105,
      skipIfMoved: 0,
    });

    // A position past the counterpart is counted as a skip, not hidden.
    const past = withApplied(withTranslated({}, translated(3, 50, 70)), observed(3, 50, 90));
    expect(derivePartition(KEY, withCommitted({}, committed(3, 50)), undefined, past).status).toMatchObject({
      replayIfMoved: 0,
      skipIfMoved: 20,
    });

    // Committing again: the newest decision is an applied commit, nothing is 'would'.
    const committing = withApplied(link, applied(2, 150, 175));
    expect(
      derivePartition(KEY, withCommitted({}, committed(2, 150)), undefined, committing).status,
    ).toMatchObject({ state: PartitionSyncState.PARTITION_SYNC_STATE_SYNCED, wouldCommitOffset: undefined });
  });

  it('says what a waiting commit waits for: its translation, its record on the target or the committer', () => {
    const source = withCommitted({}, committed(2, 150));
    const waitingFor = (link: LinkPartitionFacts) => derivePartition(KEY, source, undefined, link).waitingFor;
    expect(waitingFor({})).toBe('translation');
    expect(
      waitingFor(withTranslated({}, translated(2, 150, -1, TranslationOutcome.TRANSLATION_OUTCOME_PENDING))),
    ).toBe('record');
    expect(waitingFor(withTranslated({}, translated(2, 150, 160)))).toBe('committer');
    expect(
      waitingFor(withApplied(withTranslated({}, translated(2, 150, 160)), applied(2, 150, 160))),
    ).toBeUndefined();
  });

  it('reports replay as unknown (-1) without an exact counterpart or without anything applied', () => {
    const pending = withTranslated(
      withApplied({}, applied(1, 50, 50)),
      translated(2, 150, -1, TranslationOutcome.TRANSLATION_OUTCOME_PENDING),
    );
    expect(
      derivePartition(KEY, withCommitted({}, committed(2, 150)), undefined, pending).status,
    ).toMatchObject({
      state: PartitionSyncState.PARTITION_SYNC_STATE_PENDING,
      replayIfMoved: -1,
    });
    expect(derivePartition(KEY, withCommitted({}, committed(1, 50)), undefined, {}).status).toMatchObject({
      state: PartitionSyncState.PARTITION_SYNC_STATE_PENDING,
      targetOffset: -1,
      lagMs: -1,
      replayIfMoved: -1,
    });
  });

  it('names refusals, skips because the group is active on the target, and deletions', () => {
    const refused = {
      ...translated(1, 50, -1, TranslationOutcome.TRANSLATION_OUTCOME_REFUSED),
      refusalReason: RefusalReason.REFUSAL_REASON_LOG_APPEND_TIME_TARGET,
    };
    const r = derivePartition(
      KEY,
      withCommitted({}, committed(1, 50)),
      undefined,
      withTranslated({}, refused),
    );
    expect(r.status.state).toBe(PartitionSyncState.PARTITION_SYNC_STATE_REFUSED);
    expect(r.status.reason).toContain('LogAppendTime');
    expect(r.waitingSinceMs).toBeUndefined();
    const active = withApplied({}, applied(1, 50, 50, SkipReason.SKIP_REASON_ACTIVE_ON_TARGET));
    expect(derivePartition(KEY, withCommitted({}, committed(1, 50)), undefined, active).status.state).toBe(
      PartitionSyncState.PARTITION_SYNC_STATE_SKIPPED_ACTIVE_ON_TARGET,
    );
    const deleted = { version: v(2), detail: 'group deleted', observedAtMs: 1 };
    expect(derivePartition(KEY, withCommitted({}, committed(1, 50)), deleted, {}).status.state).toBe(
      PartitionSyncState.PARTITION_SYNC_STATE_DELETED,
    );
  });

  it('gives the same status whatever order the events arrive in (property)', () => {
    type Ev =
      | { kind: 'c'; fact: CommittedFact }
      | { kind: 't'; fact: TranslatedFact }
      | { kind: 'a'; fact: AppliedFact };
    const events = fc
      .uniqueArray(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 12 })
      .chain((versions) =>
        fc.tuple(
          fc.constant(
            versions.flatMap((n): Ev[] => [
              { kind: 'c', fact: committed(n, n * 10) },
              { kind: 't', fact: translated(n, n * 10, n * 10 + 3) },
              ...(n % 2 === 0 ? [{ kind: 'a' as const, fact: applied(n, n * 10, n * 10 + 3) }] : []),
            ]),
          ),
          fc.func(fc.integer()),
        ),
      );
    fc.assert(
      fc.property(events, ([list, rank]) => {
        const fold = (evs: Ev[]) => {
          let source = {};
          let link: LinkPartitionFacts = {};
          for (const e of evs) {
            if (e.kind === 'c') source = withCommitted(source, e.fact);
            else if (e.kind === 't') link = withTranslated(link, e.fact);
            else link = withApplied(link, e.fact);
          }
          return derivePartition(KEY, source, undefined, link).status;
        };
        const shuffled = [...list].sort((x, y) => rank(x) - rank(y));
        const status = fold(list);
        expect(fold(shuffled)).toEqual(status);
        expect(status.replayIfMoved).toBeGreaterThanOrEqual(-1);
        if (status.state === PartitionSyncState.PARTITION_SYNC_STATE_SYNCED)
          expect(status.replayIfMoved).toBe(0);
      }),
    );
  });
});
