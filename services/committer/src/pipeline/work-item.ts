// What the steps of the commit pipeline hand each other: one translated event on its way through a batch
// and what became of it, the parts of a JetStream message and of the target cluster the steps use, and
// the heartbeat areas the steps report on.
import type { Span } from '@opentelemetry/api';
import type { MsgHdrs } from 'nats';
import type { OffsetSyncError, OffsetTranslated, Version } from '@offsetsync/contracts';
import type {
  CommitAnswer,
  CommitEntry,
  CommittedOffset,
  GroupDescription,
  PartitionBounds,
  TopicPartition,
} from '@offsetsync/kafka';
import type { CommitterMode } from '@offsetsync/jetstream';
import type { ProblemBoard } from '@offsetsync/runtime';
import type { CommitterOutcome } from '../outcome-counters.js';

/** The parts of a JetStream message the pipeline uses (JsMsg has them). */
export interface InboundMessage {
  /** The subject it was published on; the committer checks it against the body. */
  readonly subject: string;
  readonly data: Uint8Array;
  readonly headers: MsgHdrs | undefined;
  readonly info: { readonly redeliveryCount: number };
  ack(): void;
  nak(millis?: number): void;
  term(reason?: string): void;
}

/** The target cluster's group offsets and log bounds (KafkaAdapter has these). */
export interface TargetCluster {
  fetchCommittedOffsets(groupId: string, topics?: readonly string[]): Promise<CommittedOffset[]>;
  commitOffsets(groupId: string, entries: readonly CommitEntry[]): Promise<CommitAnswer[]>;
  /** The group's state and live members on the target (a link that observes asks, a commit would be refused). */
  describeGroup(groupId: string): Promise<GroupDescription>;
  /** Log start offset and high watermark per partition, in request order (one ListOffsets pair per broker). */
  partitionBounds(partitions: readonly TopicPartition[]): Promise<Array<PartitionBounds | OffsetSyncError>>;
}

/** KV operations (and the lookups that go with them) in flight at once within one group. */
export const KEY_CONCURRENCY = 32;

/**
 * The topic's name on the target, where the committer reads and commits the group's offsets: the
 * translation's target topic, or its topic when the link keeps the names. Pure.
 */
export function targetTopicOf(translation: Pick<OffsetTranslated, 'topic' | 'targetTopic'>): string {
  return translation.targetTopic === '' ? translation.topic : translation.targetTopic;
}

/** The link a pipeline serves: aliases of its source and target clusters, and whether it commits. */
export interface Link {
  source: string;
  target: string;
  /** `observe` (shadow mode): decide everything, commit nothing, report what would be committed. */
  mode: CommitterMode;
}

/** Where the steps file what fails, and clear it when it works again (a ProblemBoard). */
export type ProblemReporter = Pick<ProblemBoard, 'fail' | 'recover'>;

/** The heartbeat areas of the pipeline's steps: a problem of one is cleared when that area works again. */
export const PipelineAreas = {
  /** Translated events that cannot be read (DECODE_ERROR, UNKNOWN_RECORD); refused ones: see RefusalAreas. */
  readTranslations: 'read translations',
  /** OffsetFetch of the groups' committed offsets on the target. */
  readTargetOffsets: 'read target offsets',
  /** ListOffsets of the target partitions' log bounds, for offsets above the cached log end. */
  readLogBounds: 'read target log bounds',
  /** OffsetCommit on the target (a group with live members is not a failure). */
  commitOnTarget: 'commit on target',
  /** The applied-versions KV bucket, compare-and-set contention included. */
  appliedVersions: 'applied-versions store',
} as const;

/** What happened to one translation: applied, or the reason it was skipped. */
export type AppliedOutcomeName =
  | 'APPLIED'
  /** A link that observes: the offset would have been committed; nothing was. */
  | 'OBSERVED'
  | 'STALE_VERSION'
  | 'ACTIVE_ON_TARGET'
  | 'TARGET_AHEAD'
  | 'COMMIT_FAILED'
  | 'OUT_OF_LOG_BOUNDS';

/** What an OffsetApplied event reports about one translation. */
export interface AppliedReport {
  outcome: AppliedOutcomeName;
  /** The offset committed on the target (OBSERVED: that would have been); -1 when nothing was committed. */
  targetOffset: number;
  detail: string;
  /** When the Kafka commit returned, or when the skip was decided (epoch ms). */
  appliedAtMs: number;
}

/** What became of one translation: reported (with its count), or handed back to be tried again. */
export type Fate =
  | { kind: 'report'; report: AppliedReport; counted: CommitterOutcome }
  | { kind: 'retry'; error: OffsetSyncError };

/** One translation with a target offset to commit, from intake to settlement. */
export interface WorkItem {
  message: InboundMessage;
  span: Span;
  translation: OffsetTranslated;
  version: Version;
  /** The applied-versions KV key. */
  key: string;
  group: string;
  /** Set by the step that decided it; every item has one before it is settled. */
  fate?: Fate;
}

const COUNTED: Record<AppliedOutcomeName, CommitterOutcome> = {
  APPLIED: 'applied',
  OBSERVED: 'observed',
  STALE_VERSION: 'skipped_stale_version',
  ACTIVE_ON_TARGET: 'skipped_active_on_target',
  TARGET_AHEAD: 'skipped_target_ahead',
  COMMIT_FAILED: 'skipped_commit_failed',
  OUT_OF_LOG_BOUNDS: 'skipped_out_of_log_bounds',
};

/** The fate of a translation reported as `outcome`, counted under that outcome. */
export function reported(
  outcome: AppliedOutcomeName,
  targetOffset: number,
  detail: string,
  atMs: number,
): Fate {
  return {
    kind: 'report',
    counted: COUNTED[outcome],
    report: { outcome, targetOffset, detail, appliedAtMs: atMs },
  };
}
