// The commit pipeline's work on one consumer group: read the group's committed offsets on the target
// (one OffsetFetch), decide and reserve each key in KV, read the target again right before committing
// (an application that uses assign() commits without joining the group, so nothing else tells), commit
// every reserved partition that is still to be committed in one OffsetCommit (generation -1, never
// joining the group), read the target once more after it, and put back the reservations whose commit
// failed or was withdrawn, so neither is ever remembered as applied. On a link that observes, the same
// decisions on the same reads, and nothing reserved or committed. Sets the fate of every item.
import { ErrorCodes, isOffsetSyncError, OffsetSyncError, parseCommitMetadata } from '@offsetsync/contracts';
import type { CommitAnswer, CommittedOffset } from '@offsetsync/kafka';
import type { Logger } from '@offsetsync/runtime';
import type { ActiveGroups } from '../active-groups.js';
import type { ApplyDecision, TargetCommit } from '../apply-decision.js';
import { classifyCommitError, classifyFailure, failureDetail, type CommitResult } from '../commit-result.js';
import { mapWithConcurrency } from '../concurrency.js';
import type { OutcomeCounters } from '../outcome-counters.js';
import { checkBeforeCommit, readAfterCommit } from '../target-reread.js';
import type { CommitReservation, Reservation, Reservations } from './reservations.js';
import { commitEntry, type TargetCalls } from './target-calls.js';
import {
  KEY_CONCURRENCY,
  reported,
  targetTopicOf,
  type Fate,
  type Link,
  type WorkItem,
} from './work-item.js';

/** Looks up when the application made its commit of `offset` on the target, if anything knows. */
export type ApplicationCommitTime = (
  group: string,
  topic: string,
  partition: number,
  offset: number,
) => Promise<number | undefined>;

/** The key of a topic partition within one group. */
function partitionKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

/**
 * The fate of a decision that commits nothing, decided at `nowMs`; undefined for a decision to commit.
 * Pure.
 */
export function decisionFate(decision: ApplyDecision, nowMs: number): Fate | undefined {
  switch (decision.kind) {
    case 'skip':
      return reported(decision.reason, -1, decision.detail, nowMs);
    case 'already-applied':
      return {
        kind: 'report',
        counted: 'already_applied',
        report: {
          outcome: 'APPLIED',
          targetOffset: decision.record.targetOffset,
          detail: 'already committed on the target (redelivered)',
          appliedAtMs: decision.record.appliedAtMs,
        },
      };
    case 'apply':
      return undefined;
  }
}

/** The fate of one committed partition, from the broker's answer for it, at `appliedAtMs`. Pure. */
export function commitFate(result: CommitResult, targetOffset: number, appliedAtMs: number): Fate {
  switch (result.kind) {
    case 'committed':
      return reported('APPLIED', targetOffset, '', appliedAtMs);
    case 'active':
      return reported(
        'ACTIVE_ON_TARGET',
        -1,
        'the group has live members on the target; the broker refuses commits from outside the group',
        appliedAtMs,
      );
    case 'retry':
      return { kind: 'retry', error: result.error };
    case 'failed':
      return reported('COMMIT_FAILED', -1, result.detail, appliedAtMs);
  }
}

/** Any failure of the store as a retryable error: the event is tried again later. */
function asRetryable(error: unknown): OffsetSyncError {
  if (isOffsetSyncError(error) && error.retryable) return error;
  return new OffsetSyncError('applied-versions store failed', {
    code: ErrorCodes.NATS_UNREACHABLE,
    retryable: true,
    cause: error,
  });
}

/** What the group step needs. */
export interface GroupApplyOptions {
  link: Link;
  target: TargetCalls;
  reservations: Reservations;
  activeGroups: ActiveGroups;
  counters: OutcomeCounters;
  logger: Logger;
  clock: () => number;
  applicationCommitTime?: ApplicationCommitTime | undefined;
  /**
   * Runs once per group with something to commit, after the decisions and reservations and before the
   * target's committed offsets are read again for the commit: the window in which an application's own
   * commit must be seen and kept. A seam to hold the group there (tests force an application commit into
   * it); a rejection fails the group's commit like a failed call to the target. Default: none.
   */
  beforeCommit?: ((group: string) => Promise<void>) | undefined;
}

/** Decides, reserves and commits the translations of one group. */
export class GroupApply {
  constructor(private readonly options: GroupApplyOptions) {}

  /**
   * Sets every item's fate. Resolves with the reservations that were committed, for the re-commit
   * check; rejects only when putting back a failed reservation failed.
   */
  async apply(group: string, items: readonly WorkItem[]): Promise<CommitReservation[]> {
    const now = this.options.clock();
    const waitingUntil = this.options.activeGroups.waitingUntil(group, now);
    if (waitingUntil !== undefined) {
      for (const item of items) {
        item.fate = reported(
          'ACTIVE_ON_TARGET',
          -1,
          `the group has live members on the target; the next commit is tried after ${new Date(waitingUntil).toISOString()}`,
          now,
        );
      }
      return [];
    }

    let committed: CommittedOffset[];
    try {
      committed = await this.options.target.fetchCommittedOffsets(group, [
        ...new Set(items.map((i) => targetTopicOf(i.translation))),
      ]);
    } catch (error: unknown) {
      this.groupFailed(group, items, error);
      return [];
    }
    const commitOf = await this.targetCommits(group, committed);
    if (this.options.link.mode === 'observe') {
      await this.observe(group, items, commitOf);
      return [];
    }

    const reservations: Reservation[] = [];
    await mapWithConcurrency(items, KEY_CONCURRENCY, async (item) => {
      try {
        const target = commitOf.get(
          partitionKey(targetTopicOf(item.translation), item.translation.partition),
        );
        reservations.push(await this.options.reservations.reserve(item, target));
      } catch (error: unknown) {
        this.options.logger.warn(
          { err: error, key: item.key },
          'could not reserve the version in KV; will retry',
        );
        item.fate = { kind: 'retry', error: asRetryable(error) };
      }
    });

    const decided: CommitReservation[] = [];
    for (const r of reservations) {
      const { decision } = r;
      if (decision.kind === 'apply') decided.push({ ...r, decision });
      else r.item.fate = decisionFate(decision, now);
    }
    if (decided.length === 0) return [];
    const toCommit = await this.checkTargetAgain(group, decided, commitOf);
    if (toCommit.length === 0) return [];
    return this.commit(group, toCommit, now);
  }

  /**
   * Shadow mode: decides every item as a commit would, on the target's committed offsets and what KV
   * holds, and reports the offset it would commit (OBSERVED) or why it would not; writes nothing to KV
   * and commits nothing. A group with live members on the target (where the broker would refuse the
   * commit) is asked for, since no refused commit tells.
   */
  private async observe(
    group: string,
    items: readonly WorkItem[],
    commitOf: ReadonlyMap<string, TargetCommit>,
  ): Promise<void> {
    let members: number;
    try {
      members = (await this.options.target.describeGroup(group)).memberCount;
    } catch (error: unknown) {
      this.groupFailed(group, items, error);
      return;
    }
    if (members > 0) {
      const now = this.options.clock();
      for (const item of items)
        item.fate = reported(
          'ACTIVE_ON_TARGET',
          -1,
          `the group has ${members} live member(s) on the target; a commit would be refused`,
          now,
        );
      return;
    }
    await mapWithConcurrency(items, KEY_CONCURRENCY, async (item) => {
      const { translation } = item;
      try {
        const decision = await this.options.reservations.decide(
          item,
          commitOf.get(partitionKey(targetTopicOf(translation), translation.partition)),
        );
        const now = this.options.clock();
        const wouldCommit = decision.kind === 'apply' ? decision.record.targetOffset : undefined;
        item.fate =
          wouldCommit === undefined
            ? decisionFate(decision, now)
            : reported(
                'OBSERVED',
                wouldCommit,
                `the link observes: would commit ${wouldCommit} on the target; nothing committed`,
                now,
              );
      } catch (error: unknown) {
        this.options.logger.warn(
          { err: error, key: item.key },
          'could not read the version in KV; will retry',
        );
        item.fate = { kind: 'retry', error: asRetryable(error) };
      }
    });
  }

  /**
   * Reads the target again right before the commit and withdraws the partitions that changed there since
   * the decision in a way that forbids the commit: an application commit (kept, reported TARGET_AHEAD,
   * the ownership recorded) or offsetsync's mark of a newer version (STALE_VERSION). Resolves with the
   * partitions still to be committed; a failed read fails them all, as a failed commit would.
   */
  private async checkTargetAgain(
    group: string,
    decided: readonly CommitReservation[],
    seen: ReadonlyMap<string, TargetCommit>,
  ): Promise<CommitReservation[]> {
    const { reservations, link, logger } = this.options;
    let current: Map<string, TargetCommit>;
    try {
      await this.options.beforeCommit?.(group);
      current = await this.targetCommits(
        group,
        await this.options.target.fetchCommittedOffsets(group, [
          ...new Set(decided.map((r) => targetTopicOf(r.item.translation))),
        ]),
      );
    } catch (error: unknown) {
      await mapWithConcurrency(decided, KEY_CONCURRENCY, (r) => reservations.restore(r));
      this.groupFailed(
        group,
        decided.map((r) => r.item),
        error,
      );
      return [];
    }
    const now = this.options.clock();
    const toCommit: CommitReservation[] = [];
    const withdrawn: { r: CommitReservation; ownedSinceMs?: number }[] = [];
    for (const r of decided) {
      const key = partitionKey(targetTopicOf(r.item.translation), r.item.translation.partition);
      const check = checkBeforeCommit({
        source: link.source,
        reserved: r.decision.record,
        lastCommitted: r.written === undefined ? r.decision.record : r.written.previous,
        seen: seen.get(key),
        current: current.get(key),
        nowMs: now,
      });
      if (check.kind === 'commit') {
        toCommit.push(r);
        continue;
      }
      r.item.fate = reported(check.reason, -1, check.detail, now);
      if (check.reason === 'TARGET_AHEAD') {
        withdrawn.push({ r, ownedSinceMs: check.ownedSinceMs });
        this.options.counters.applicationCommitSeen('before_commit');
        logger.warn(
          {
            group,
            topic: r.item.translation.topic,
            partition: r.item.translation.partition,
            applicationOffset: current.get(key)?.offset,
            notCommitted: r.decision.record.targetOffset,
          },
          'the application committed on the target between the decision and the commit; kept its commit and did not commit this partition',
        );
      } else {
        withdrawn.push({ r });
      }
    }
    await mapWithConcurrency(withdrawn, KEY_CONCURRENCY, (w) => reservations.restore(w.r, w.ownedSinceMs));
    return toCommit;
  }

  /**
   * Reads the target once more after the commit: an application commit that landed right after
   * offsetsync's stands (it is newer), and is reported in the event's detail, a warning and a count. A
   * failed read changes nothing: the commit itself succeeded.
   */
  private async checkTargetAfter(group: string, applied: readonly CommitReservation[]): Promise<void> {
    const { link, logger } = this.options;
    let current: CommittedOffset[];
    try {
      current = await this.options.target.fetchCommittedOffsets(group, [
        ...new Set(applied.map((r) => targetTopicOf(r.item.translation))),
      ]);
    } catch (error: unknown) {
      logger.warn({ err: error, group }, 'could not read the target again after the commit');
      return;
    }
    const commitOf = new Map(current.map((c) => [partitionKey(c.topic, c.partition), c]));
    for (const r of applied) {
      const { topic, partition } = r.item.translation;
      const after = readAfterCommit(
        link.source,
        r.decision.record,
        commitOf.get(partitionKey(topic, partition)),
      );
      if (after.kind !== 'application-commit') continue;
      if (r.item.fate?.kind === 'report') r.item.fate.report.detail = after.detail;
      this.options.counters.applicationCommitSeen('after_commit');
      logger.warn(
        {
          group,
          topic,
          partition,
          applicationOffset: after.offset,
          committed: r.decision.record.targetOffset,
        },
        "the application committed on the target right after offsetsync's commit; its commit stands",
      );
    }
  }

  /**
   * The group's committed offsets on the target by partition, with the application's commit time where
   * a collector reading the target published it (only for commits without offsetsync's mark).
   */
  private async targetCommits(
    group: string,
    committed: readonly CommittedOffset[],
  ): Promise<Map<string, TargetCommit>> {
    const commitOf = new Map<string, TargetCommit>(
      committed.map((c) => [partitionKey(c.topic, c.partition), c]),
    );
    const lookUpTime = this.options.applicationCommitTime;
    if (lookUpTime !== undefined) {
      await mapWithConcurrency(committed, KEY_CONCURRENCY, async (c) => {
        if (parseCommitMetadata(c.metadata) !== undefined) return;
        const commitTimestampMs = await lookUpTime(group, c.topic, c.partition, c.offset).catch(
          () => undefined,
        );
        if (commitTimestampMs !== undefined)
          commitOf.set(partitionKey(c.topic, c.partition), { ...c, commitTimestampMs });
      });
    }
    return commitOf;
  }

  /** Commits the reserved partitions in one OffsetCommit and sets their fates from the answers. */
  private async commit(
    group: string,
    toCommit: readonly CommitReservation[],
    now: number,
  ): Promise<CommitReservation[]> {
    const { reservations, link } = this.options;
    let answers: CommitAnswer[];
    try {
      answers = await this.options.target.commitOffsets(
        group,
        toCommit.map(({ item, decision }) => commitEntry(link.source, item.translation, decision.record)),
      );
    } catch (error: unknown) {
      await mapWithConcurrency(toCommit, KEY_CONCURRENCY, (r) => reservations.restore(r));
      this.groupFailed(
        group,
        toCommit.map((r) => r.item),
        error,
      );
      return [];
    }
    const appliedAtMs = this.options.clock();

    const failed: CommitReservation[] = [];
    const applied: CommitReservation[] = [];
    let refused = false;
    toCommit.forEach((r, i) => {
      const result = classifyCommitError(answers[i]?.error);
      r.item.fate = commitFate(result, r.decision.record.targetOffset, appliedAtMs);
      if (result.kind === 'committed') {
        this.options.counters.recordLag(appliedAtMs, r.item.translation.sourceCommitTimestampMs, {
          source: link.source,
          target: link.target,
        });
        applied.push(r);
        return;
      }
      if (result.kind === 'active') refused = true;
      failed.push(r);
    });
    if (refused) {
      this.options.activeGroups.refused(group, now);
      // Once per group per wait period: until then the group's events are skipped without asking the broker.
      this.options.logger.warn(
        { group },
        'group has live members on the target; its offsets are not committed until it is empty and the source commits again',
      );
    }
    // A failed commit must not be remembered as applied.
    await mapWithConcurrency(failed, KEY_CONCURRENCY, (r) => reservations.restore(r));
    if (applied.length > 0) await this.checkTargetAfter(group, applied);
    return applied;
  }

  /** A Kafka call for the whole group failed: retry its items later, or report them. */
  private groupFailed(group: string, items: readonly WorkItem[], error: unknown): void {
    const result = classifyFailure(error);
    const now = this.options.clock();
    for (const item of items) {
      if (result.kind === 'retry') item.fate = { kind: 'retry', error: result.error };
      else if (result.kind === 'active')
        item.fate = reported('ACTIVE_ON_TARGET', -1, failureDetail(error), now);
      else item.fate = reported('COMMIT_FAILED', -1, result.detail, now);
    }
    this.options.logger.warn(
      { err: error, group, events: items.length, retry: result.kind === 'retry' },
      result.kind === 'retry'
        ? 'target cluster call failed; the events will be retried'
        : 'target cluster call failed',
    );
  }
}
