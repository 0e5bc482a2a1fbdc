// Builds the OffsetApplied event the committer publishes for each translation it handled. Pure.
import {
  ApplyOutcome,
  OffsetApplied,
  SkipReason,
  TranslationOutcome,
  type Names,
  type OffsetTranslated,
} from '@offsetsync/contracts';

/** What happened to one translation: applied, or the reason it was skipped. */
export type AppliedOutcomeName =
  'APPLIED' | 'STALE_VERSION' | 'ACTIVE_ON_TARGET' | 'TARGET_AHEAD' | 'COMMIT_FAILED';

export interface AppliedReport {
  outcome: AppliedOutcomeName;
  /** The offset committed on the target; -1 when nothing was committed. */
  targetOffset: number;
  detail: string;
  /** When the Kafka commit returned, or when the skip was decided (epoch ms). */
  appliedAtMs: number;
}

const SKIP_REASONS: Record<Exclude<AppliedOutcomeName, 'APPLIED'>, SkipReason> = {
  STALE_VERSION: SkipReason.SKIP_REASON_STALE_VERSION,
  ACTIVE_ON_TARGET: SkipReason.SKIP_REASON_ACTIVE_ON_TARGET,
  TARGET_AHEAD: SkipReason.SKIP_REASON_TARGET_AHEAD,
  COMMIT_FAILED: SkipReason.SKIP_REASON_COMMIT_FAILED,
};

export function appliedEvent(translation: OffsetTranslated, report: AppliedReport): OffsetApplied {
  const applied = report.outcome === 'APPLIED';
  return OffsetApplied.fromPartial({
    sourceCluster: translation.sourceCluster,
    targetCluster: translation.targetCluster,
    group: translation.group,
    topic: translation.topic,
    partition: translation.partition,
    sourceOffset: translation.sourceOffset,
    targetOffset: applied ? report.targetOffset : -1,
    exact: translation.outcome === TranslationOutcome.TRANSLATION_OUTCOME_EXACT,
    outcome: applied ? ApplyOutcome.APPLY_OUTCOME_APPLIED : ApplyOutcome.APPLY_OUTCOME_SKIPPED,
    skipReason: applied
      ? SkipReason.SKIP_REASON_UNSPECIFIED
      : SKIP_REASONS[report.outcome as keyof typeof SKIP_REASONS],
    detail: report.detail,
    version: translation.version,
    sourceCommitTimestampMs: translation.sourceCommitTimestampMs,
    appliedAtMs: report.appliedAtMs,
  });
}

export function appliedSubject(names: Names, translation: OffsetTranslated): string {
  return names.applied(translation.sourceCluster, translation.targetCluster, {
    group: translation.group,
    topic: translation.topic,
    partition: translation.partition,
  });
}
