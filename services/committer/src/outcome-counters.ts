// Counts what the committer did with each translated event, for heartbeats and metrics, and records
// the end-to-end lag of applied offsets.
import type { Counter, Histogram, Meter } from '@opentelemetry/api';

export type CommitterOutcome =
  | 'applied'
  /** A link that observes (shadow mode): decided to commit, reported, nothing committed. */
  | 'observed'
  /** A redelivered version that the target already holds; reported again, not committed again. */
  | 'already_applied'
  | 'skipped_stale_version'
  | 'skipped_active_on_target'
  | 'skipped_target_ahead'
  | 'skipped_commit_failed'
  /** The target offset lies outside the target partition's log; never committed (SKIP_REASON_OUT_OF_LOG_BOUNDS). */
  | 'skipped_out_of_log_bounds'
  | 'not_translated_pending'
  | 'not_translated_refused'
  /** Handed back to JetStream to be tried again after a transient failure. */
  | 'retried'
  /** Failed on every allowed delivery with an error that is not retryable; terminated (see BatchConsumer). */
  | 'dead_lettered'
  /** Not a decodable OffsetTranslated; terminated. */
  | 'malformed'
  /** A translation whose body names another link than its subject and consumer; terminated, not reported. */
  | 'refused_foreign_link'
  /** A translation whose body names another key than its subject; terminated, not reported. */
  | 'refused_subject_mismatch';

/**
 * When an application's own commit on the target was seen around offsetsync's commit of the same
 * partition: `before_commit`, by the read right before it (offsetsync then did not commit); `after_commit`,
 * by the read right after it (the application's commit landed later and stands).
 */
export type ApplicationCommitSeen = 'before_commit' | 'after_commit';

export class OutcomeCounters {
  private readonly counts = new Map<string, number>();
  private readonly events: Counter;
  private readonly lag: Histogram;
  private readonly applicationCommits: Counter;
  private readonly applicationCommitCounts: Record<ApplicationCommitSeen, number> = {
    before_commit: 0,
    after_commit: 0,
  };

  constructor(meter: Meter) {
    this.events = meter.createCounter('offsetsync_committer_events', {
      description: 'Translated offsets handled by the committer, by outcome.',
    });
    this.lag = meter.createHistogram('offsetsync_end_to_end_lag_ms', {
      description: 'Time from the commit on the source to the commit of its translation on the target.',
      unit: 'ms',
    });
    this.applicationCommits = meter.createCounter('offsetsync_committer_application_commits_raced', {
      description:
        "Application commits seen on the target between offsetsync's decision and its commit of the same partition, or right after that commit.",
    });
  }

  /** Counts an application commit that raced offsetsync's commit of a partition (not an event outcome). */
  applicationCommitSeen(when: ApplicationCommitSeen): void {
    this.applicationCommitCounts[when]++;
    this.applicationCommits.add(1, { when });
  }

  /** The application commits counted by {@link applicationCommitSeen} so far. */
  applicationCommitsSeen(): Record<ApplicationCommitSeen, number> {
    return { ...this.applicationCommitCounts };
  }

  add(outcome: CommitterOutcome, count = 1): void {
    if (count === 0) return;
    this.counts.set(outcome, (this.counts.get(outcome) ?? 0) + count);
    this.events.add(count, { outcome });
  }

  /** Records the lag of one applied offset; ignores events without a source commit time. */
  recordLag(
    appliedAtMs: number,
    sourceCommitTimestampMs: number,
    attributes: { source: string; target: string },
  ): void {
    if (sourceCommitTimestampMs <= 0) return;
    this.lag.record(Math.max(0, appliedAtMs - sourceCommitTimestampMs), attributes);
  }

  snapshot(): Record<string, number> {
    return Object.fromEntries(this.counts);
  }
}
