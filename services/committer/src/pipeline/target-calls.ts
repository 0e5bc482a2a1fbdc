// The commit pipeline's calls to the target cluster: OffsetFetch of a group's committed offsets and an
// admin-style OffsetCommit of a group's partitions with offsetsync's mark in the metadata. Every call
// files what went wrong under its area of the heartbeat problems, and clears it when the call works. A
// call that throws is logged by its caller; a commit whose partitions the broker refused one by one (a
// missing topic ACL) is logged here, once per new problem.
import { formatCommitMetadata, type OffsetTranslated } from '@offsetsync/contracts';
import type { CommitAnswer, CommitEntry, CommittedOffset, GroupDescription } from '@offsetsync/kafka';
import type { Logger } from '@offsetsync/runtime';
import type { AppliedRecord } from '../applied-record.js';
import { classifyCommitError, classifyFailure } from '../commit-result.js';
import { PipelineAreas, targetTopicOf, type ProblemReporter, type TargetCluster } from './work-item.js';

/**
 * The OffsetCommit entry of a reserved record: its target offset, marked with the origin cluster and
 * the version it applies (so the target is its own floor, and the application's own commits can be
 * told apart). Pure.
 */
export function commitEntry(
  source: string,
  translation: OffsetTranslated,
  record: AppliedRecord,
): CommitEntry {
  const version = record.version!;
  return {
    topic: targetTopicOf(translation),
    partition: translation.partition,
    offset: record.targetOffset,
    metadata: formatCommitMetadata(
      { origin: source, offsetsPartition: version.offsetsPartition, offsetsOffset: version.offsetsOffset },
      '',
    ),
  };
}

/**
 * The first error among a commit's answers that is a failure of the target: a refusal because the group
 * has live members is the group's state, not a problem of the committer. Pure.
 */
export function commitFailure(answers: readonly CommitAnswer[]): CommitAnswer['error'] {
  return answers.find((a) => a.error !== undefined && classifyCommitError(a.error).kind !== 'active')?.error;
}

/** The target cluster with each call's problems reported. */
export class TargetCalls {
  constructor(
    private readonly cluster: TargetCluster,
    private readonly problems: ProblemReporter | undefined,
    private readonly logger: Logger,
  ) {}

  /** The group's committed offsets of `topics` on the target. */
  async fetchCommittedOffsets(group: string, topics: readonly string[]): Promise<CommittedOffset[]> {
    try {
      const committed = await this.cluster.fetchCommittedOffsets(group, topics);
      this.problems?.recover(PipelineAreas.readTargetOffsets);
      return committed;
    } catch (error: unknown) {
      this.problems?.fail(PipelineAreas.readTargetOffsets, error);
      throw error;
    }
  }

  /** The group's state and members on the target (filed under the reads of the target's offsets). */
  async describeGroup(group: string): Promise<GroupDescription> {
    try {
      const description = await this.cluster.describeGroup(group);
      this.problems?.recover(PipelineAreas.readTargetOffsets);
      return description;
    } catch (error: unknown) {
      this.problems?.fail(PipelineAreas.readTargetOffsets, error);
      throw error;
    }
  }

  /** Commits the group's entries on the target; the answers in entry order. */
  async commitOffsets(group: string, entries: readonly CommitEntry[]): Promise<CommitAnswer[]> {
    let answers: CommitAnswer[];
    try {
      answers = await this.cluster.commitOffsets(group, entries);
    } catch (error: unknown) {
      if (classifyFailure(error).kind !== 'active') this.problems?.fail(PipelineAreas.commitOnTarget, error);
      throw error;
    }
    const failure = commitFailure(answers);
    if (failure === undefined) this.problems?.recover(PipelineAreas.commitOnTarget);
    else if (this.problems?.fail(PipelineAreas.commitOnTarget, failure) ?? true)
      this.logger.warn(
        { err: failure, group },
        'the target refused to commit partitions of a group; its events are retried',
      );
    return answers;
  }
}
