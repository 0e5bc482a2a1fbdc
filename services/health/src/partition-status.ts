// What health knows about one partition of one group, folded from the events of the streams, and the
// PartitionStatus derived from it. Pure: the reducer takes facts, the derivation takes the clock as a value.
import {
  ApplyOutcome,
  compareVersions as compareVersionOrder,
  PartitionStatus,
  PartitionSyncState,
  RefusalReason,
  SkipReason,
  TranslationOutcome,
  type Version,
} from '@offsetsync/contracts';

/** The newest commit of a partition on the source (from OffsetCommitted). */
export interface CommittedFact {
  version: Version;
  offset: number;
  commitTimestampMs: number;
  observedAtMs: number;
}

/** Offsets removed on the source (from OffsetDeleted), for one partition or the whole group. */
export interface DeletedFact {
  version: Version;
  detail: string;
  observedAtMs: number;
}

/** The newest translation for a link (from OffsetTranslated). */
export interface TranslatedFact {
  version: Version;
  sourceOffset: number;
  targetOffset: number;
  outcome: TranslationOutcome;
  refusalReason: RefusalReason;
  detail: string;
  attempts: number;
  sourceCommitTimestampMs: number;
  /** The topic's name on the target; empty or unset when it is the same. */
  targetTopic?: string;
}

/** What the committer did (from OffsetApplied). */
export interface AppliedFact {
  version: Version;
  sourceOffset: number;
  targetOffset: number;
  exact: boolean;
  outcome: ApplyOutcome;
  skipReason: SkipReason;
  detail: string;
  sourceCommitTimestampMs: number;
  appliedAtMs: number;
  /** The topic's name on the target; empty or unset when it is the same. */
  targetTopic?: string;
}

/** The source side of a partition: shared by every link from that source. */
export interface SourcePartitionFacts {
  committed?: CommittedFact | undefined;
  deleted?: DeletedFact | undefined;
}

/** The target side of a partition on one link. */
export interface LinkPartitionFacts {
  translated?: TranslatedFact | undefined;
  /** The newest decision of the committer, whatever it was. */
  decision?: AppliedFact | undefined;
  /** The newest offset the committer actually committed. */
  applied?: AppliedFact | undefined;
}

/** What health folds a fact without a version in as: older than every real version, equal to another such. */
const NO_VERSION: Version = { offsetsPartition: -1, offsetsOffset: -1 };

/**
 * The version order of contracts, with health's reading of a missing version: events without one are read
 * as {@link NO_VERSION}, so a fact nobody has seen yet (undefined) equals such an event rather than
 * preceding it.
 */
export function compareVersions(a: Version | undefined, b: Version | undefined): number {
  return Math.sign(compareVersionOrder(a ?? NO_VERSION, b ?? NO_VERSION));
}

/** Keeps the newer of two facts; on equal versions the later arrival wins (a pending attempt, then its result). */
function newer<T extends { version: Version }>(current: T | undefined, next: T): T {
  return current === undefined || compareVersions(next.version, current.version) >= 0 ? next : current;
}

export function withCommitted(facts: SourcePartitionFacts, fact: CommittedFact): SourcePartitionFacts {
  return { ...facts, committed: newer(facts.committed, fact) };
}

export function withDeleted(facts: SourcePartitionFacts, fact: DeletedFact): SourcePartitionFacts {
  return { ...facts, deleted: newer(facts.deleted, fact) };
}

export function withTranslated(facts: LinkPartitionFacts, fact: TranslatedFact): LinkPartitionFacts {
  return { ...facts, translated: newer(facts.translated, fact) };
}

export function withApplied(facts: LinkPartitionFacts, fact: AppliedFact): LinkPartitionFacts {
  const decision = newer(facts.decision, fact);
  const applied =
    fact.outcome === ApplyOutcome.APPLY_OUTCOME_APPLIED ? newer(facts.applied, fact) : facts.applied;
  return { ...facts, decision, applied };
}

/** A partition's status, plus since when its latest source commit waits (for STALLED / LAGGING). */
export interface DerivedPartition {
  status: PartitionStatus;
  /** observedAtMs of a source commit not yet handled on the target; undefined when nothing waits. */
  waitingSinceMs: number | undefined;
  /**
   * What that commit waits for: its translation, its record on the target (the translation is pending:
   * health's oldest-pending-translation gauge) or the committer. Undefined when nothing waits.
   */
  waitingFor?: 'translation' | 'record' | 'committer' | undefined;
}

const REFUSALS: Record<number, string> = {
  [RefusalReason.REFUSAL_REASON_LOG_APPEND_TIME_TARGET]: 'the target topic uses LogAppendTime',
  [RefusalReason.REFUSAL_REASON_PARTITION_MISSING]: 'the partition does not exist on the target',
  [RefusalReason.REFUSAL_REASON_INVALID_SOURCE_OFFSET]: 'the source commit is not a valid position',
  [RefusalReason.REFUSAL_REASON_ANCHOR_UNRESOLVED]: 'no anchor record could be read on the source',
};

function refusalText(t: TranslatedFact): string {
  const why = REFUSALS[t.refusalReason] ?? 'refused';
  return t.detail ? `translation refused: ${why} (${t.detail})` : `translation refused: ${why}`;
}

/**
 * Where a consumer that moved to the target now would start: the offset offsetsync committed there, or,
 * on a link that observes (the newest decision OBSERVED), the offset it would have committed.
 */
function movedPosition(link: LinkPartitionFacts): AppliedFact | undefined {
  const decision = link.decision;
  return decision?.outcome === ApplyOutcome.APPLY_OUTCOME_OBSERVED ? decision : link.applied;
}

/**
 * Records a consumer would read again (`replay`) or pass over unread (`skip`) if it moved to the target
 * now: the target records between {@link movedPosition} and the counterpart of the latest source commit.
 * The counterpart is known only from an exact translation of that commit; otherwise both are -1
 * (unknown). Pure.
 */
function ifMoved(
  committed: CommittedFact | undefined,
  link: LinkPartitionFacts,
): { replay: number; skip: number } {
  const unknown = { replay: -1, skip: -1 };
  const position = movedPosition(link);
  if (position === undefined) return unknown;
  const latest = committed?.version ?? link.translated?.version;
  const translated = link.translated;
  if (
    translated !== undefined &&
    translated.outcome === TranslationOutcome.TRANSLATION_OUTCOME_EXACT &&
    compareVersions(translated.version, latest) === 0
  ) {
    const ahead = translated.targetOffset - position.targetOffset;
    return { replay: Math.max(0, ahead), skip: Math.max(0, -ahead) };
  }
  if (position.exact && compareVersions(position.version, latest) === 0) return { replay: 0, skip: 0 };
  return unknown;
}

/** The topic's name on the target, as the latest translation or report gave it. Pure. */
function targetTopicOf(topic: string, link: LinkPartitionFacts): string {
  const named = [link.applied?.targetTopic, link.translated?.targetTopic].find(
    (t): t is string => t !== undefined && t !== '',
  );
  return named ?? topic;
}

/**
 * Derives the status of one partition on one link; `excludedBy` names the link filter that keeps it off
 * the link, if one does.
 */
export function derivePartition(
  key: { topic: string; partition: number },
  source: SourcePartitionFacts,
  groupDeleted: DeletedFact | undefined,
  link: LinkPartitionFacts,
  excludedBy?: string,
): DerivedPartition {
  const committed = source.committed;
  const latestVersion = committed?.version ?? link.translated?.version ?? link.decision?.version;
  const sourceOffset =
    committed?.offset ?? link.translated?.sourceOffset ?? link.decision?.sourceOffset ?? -1;
  const applied = link.applied;
  const latestCommitTs =
    committed?.commitTimestampMs ??
    link.translated?.sourceCommitTimestampMs ??
    applied?.sourceCommitTimestampMs;
  const lagMs =
    applied === undefined
      ? -1
      : compareVersions(applied.version, latestVersion) >= 0
        ? 0
        : Math.max(0, (latestCommitTs ?? 0) - applied.sourceCommitTimestampMs);

  const moved = ifMoved(committed, link);
  const observed = link.decision?.outcome === ApplyOutcome.APPLY_OUTCOME_OBSERVED ? link.decision : undefined;
  const base = {
    topic: key.topic,
    targetTopic: targetTopicOf(key.topic, link),
    partition: key.partition,
    sourceOffset,
    targetOffset: applied?.targetOffset ?? -1,
    // Of the position shown: the committed offset, or on a link that observes the one it would commit.
    exact: movedPosition(link)?.exact ?? false,
    lagMs,
    replayIfMoved: moved.replay,
    skipIfMoved: moved.skip,
    wouldCommitOffset: observed?.targetOffset,
    version: latestVersion,
  };
  const status = (
    state: PartitionSyncState,
    reason: string,
    waiting?: { sinceMs: number | undefined; for: NonNullable<DerivedPartition['waitingFor']> },
  ): DerivedPartition => ({
    status: PartitionStatus.fromPartial({ ...base, state, reason }),
    waitingSinceMs: waiting?.sinceMs,
    ...(waiting?.sinceMs === undefined ? {} : { waitingFor: waiting.for }),
  });

  if (excludedBy !== undefined)
    return status(PartitionSyncState.PARTITION_SYNC_STATE_EXCLUDED, `not sent to this target: ${excludedBy}`);

  const deleted = [source.deleted, groupDeleted]
    .filter((d): d is DeletedFact => d !== undefined)
    .find((d) => committed === undefined || compareVersions(d.version, committed.version) > 0);
  if (deleted !== undefined) {
    return status(
      PartitionSyncState.PARTITION_SYNC_STATE_DELETED,
      `offsets deleted on the source: ${deleted.detail}`,
    );
  }

  const decision = link.decision;
  if (observed !== undefined && compareVersions(observed.version, latestVersion) >= 0) {
    const replay = moved.replay > 0 ? `; a consumer moving now would read ${moved.replay} records again` : '';
    return status(
      PartitionSyncState.PARTITION_SYNC_STATE_OBSERVED,
      `the link observes: would commit ${observed.targetOffset} on the target (${observed.exact ? 'exact' : 'inexact: never past the counterpart'}); nothing committed${replay}`,
    );
  }
  if (decision !== undefined && compareVersions(decision.version, latestVersion) >= 0) {
    switch (
      decision.outcome === ApplyOutcome.APPLY_OUTCOME_APPLIED
        ? SkipReason.SKIP_REASON_UNSPECIFIED
        : decision.skipReason
    ) {
      case SkipReason.SKIP_REASON_UNSPECIFIED:
      case SkipReason.SKIP_REASON_STALE_VERSION:
        return status(
          PartitionSyncState.PARTITION_SYNC_STATE_SYNCED,
          applied?.exact === false
            ? `committed ${applied.targetOffset} on the target (inexact: never past the counterpart)`
            : `committed ${applied?.targetOffset ?? decision.targetOffset} on the target (exact)`,
        );
      case SkipReason.SKIP_REASON_ACTIVE_ON_TARGET:
        return status(
          PartitionSyncState.PARTITION_SYNC_STATE_SKIPPED_ACTIVE_ON_TARGET,
          `skipped: the group has live members on the target${decision.detail ? ` (${decision.detail})` : ''}`,
        );
      case SkipReason.SKIP_REASON_TARGET_AHEAD:
        return status(
          PartitionSyncState.PARTITION_SYNC_STATE_TARGET_AHEAD,
          'the application committed on the target more recently than on the source',
        );
      case SkipReason.SKIP_REASON_COMMIT_FAILED:
        return status(
          PartitionSyncState.PARTITION_SYNC_STATE_REFUSED,
          `the target refused the commit${decision.detail ? `: ${decision.detail}` : ''}`,
        );
      case SkipReason.SKIP_REASON_OUT_OF_LOG_BOUNDS:
        return status(
          PartitionSyncState.PARTITION_SYNC_STATE_REFUSED,
          `the committer refused an offset outside the target's log${decision.detail ? `: ${decision.detail}` : ''}`,
        );
      default:
        // NOT_TRANSLATED: the translation decides below.
        break;
    }
  }

  const translated = link.translated;
  const translatedLatest =
    translated !== undefined && compareVersions(translated.version, latestVersion) >= 0;
  if (translatedLatest && translated.outcome === TranslationOutcome.TRANSLATION_OUTCOME_REFUSED) {
    return status(PartitionSyncState.PARTITION_SYNC_STATE_REFUSED, refusalText(translated));
  }
  const waitingSince = committed?.observedAtMs;
  if (!translatedLatest) {
    return status(
      PartitionSyncState.PARTITION_SYNC_STATE_PENDING,
      `source commit ${sourceOffset} waits for translation`,
      { sinceMs: waitingSince, for: 'translation' },
    );
  }
  if (translated.outcome === TranslationOutcome.TRANSLATION_OUTCOME_PENDING) {
    return status(
      PartitionSyncState.PARTITION_SYNC_STATE_PENDING,
      `the record at source offset ${sourceOffset} has not arrived on the target yet (attempt ${translated.attempts})`,
      { sinceMs: waitingSince, for: 'record' },
    );
  }
  return status(
    PartitionSyncState.PARTITION_SYNC_STATE_PENDING,
    `translated to ${translated.targetOffset}; waiting for the committer`,
    { sinceMs: waitingSince, for: 'committer' },
  );
}
