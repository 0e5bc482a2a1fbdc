// The events the health benchmark feeds the health service, built the way the services build them: for
// each group partition an OffsetCommitted (collector), an OffsetTranslated (translator) and an
// OffsetApplied (committer) of one link, the tombstones of a deleted group, heartbeats of the three
// services, and a sentinel group partition whose status tells that health has read every stream up to a
// point. Through the contracts' envelope, with the message ids the services use. Pure: no servers, no
// clock (times are arguments).
import {
  Anchor,
  AnchorStatus,
  ApplyOutcome,
  appliedMessageId,
  committedMessageId,
  DeletionReason,
  encodeEvent,
  Heartbeat,
  OffsetApplied,
  OffsetCommitted,
  OffsetDeleted,
  OffsetTranslated,
  Progress,
  ServiceRole,
  TimestampType,
  TranslationMethod,
  TranslationOutcome,
  translatedMessageId,
  type GroupPartition,
  type Names,
  type OffsetSyncEvent,
  type PartitionStatus,
  type Version,
} from '@offsetsync/contracts';
import type { StreamMessage } from '@offsetsync/jetstream';

/** What the benchmark's groups look like and which link they go along. */
export interface HealthWorkloadShape {
  names: Names;
  source: string;
  target: string;
  /** Partitions each group commits. */
  partitions: number;
  /** How many topics the groups spread over: group i consumes topic i mod topics. */
  topics: number;
}

/**
 * Records between the source and the target copy of a topic: the target holds records of its own
 * before the copy, so translated offsets differ from source ones as they do in a real deployment.
 */
const TARGET_SHIFT = 1_000;
/** Partitions of `__consumer_offsets` the groups' commits are spread over (Kafka's default is 50). */
const OFFSETS_PARTITIONS = 50;

/** The group of index `index`: fixed width, so that the listing order is the index order. */
export function groupName(index: number): string {
  return `bench-health-consumer-${String(index).padStart(8, '0')}`;
}

/** The topic group `index` consumes. */
export function topicOf(shape: HealthWorkloadShape, index: number): string {
  return `bench.health.events-${String(index % shape.topics).padStart(3, '0')}`;
}

/**
 * Hands out versions (positions in `__consumer_offsets`): each group on one offsets partition, as Kafka
 * places it, and every version newer than the ones before on that partition, as records are appended.
 */
export class VersionClock {
  private next = 1;

  /** A fresh version for group `index`, newer than every one given before. */
  take(index: number): Version {
    return { offsetsPartition: index % OFFSETS_PARTITIONS, offsetsOffset: this.next++ };
  }
}

/** Where a commit stands and when it happened. */
interface CommitPoint {
  /** Committed offset on the source. */
  offset: number;
  version: Version;
  /** When the application committed (epoch ms); the services' later stamps follow it. */
  atMs: number;
}

/** One commit of one group partition (group by index). */
export interface PartitionCommit extends CommitPoint {
  group: number;
  partition: number;
}

/** A 64-digit hexadecimal digest, as the collector's fingerprints are; derived from the offset. */
function fingerprint(offset: number): string {
  return offset.toString(16).padStart(64, '0');
}

function message(event: OffsetSyncEvent, subject: string, msgId: string): StreamMessage {
  const encoded = encodeEvent(event, { subject, msgId });
  return { subject, payload: encoded.payload, msgId, headers: encoded.headers };
}

function groupPartitionOf(shape: HealthWorkloadShape, commit: PartitionCommit): GroupPartition {
  return { group: groupName(commit.group), topic: topicOf(shape, commit.group), partition: commit.partition };
}

/**
 * The three events of one commit that went through the pipeline: committed on the source, translated
 * exactly, applied on the target; on the committed, translated and applied streams, in that order.
 */
export function commitEvents(shape: HealthWorkloadShape, commit: PartitionCommit): StreamMessage[] {
  const key = groupPartitionOf(shape, commit);
  return [
    committedMessage(shape, key, commit),
    translatedMessage(shape, key, commit, commit.offset + TARGET_SHIFT),
    appliedMessage(shape, key, commit, commit.offset + TARGET_SHIFT),
  ];
}

function committedMessage(shape: HealthWorkloadShape, key: GroupPartition, commit: CommitPoint) {
  const anchor = (offset: number, atMs: number) =>
    Anchor.fromPartial({
      offset,
      timestampMs: atMs,
      timestampType: TimestampType.TIMESTAMP_TYPE_CREATE_TIME,
      fingerprint: fingerprint(offset),
      keySize: 16,
      valueSize: 120,
    });
  const event = OffsetCommitted.fromPartial({
    sourceCluster: shape.source,
    ...key,
    committedOffset: commit.offset,
    commitTimestampMs: commit.atMs,
    expireTimestampMs: -1,
    leaderEpoch: 0,
    metadata: '',
    version: commit.version,
    lastConsumed: anchor(commit.offset - 1, commit.atMs - 20),
    nextRecord: anchor(commit.offset, commit.atMs - 10),
    anchorStatus: AnchorStatus.ANCHOR_STATUS_RESOLVED,
    sourceLogStartOffset: 0,
    sourceLogEndOffset: commit.offset + 100,
    distinctAround: 0,
    observedAtMs: commit.atMs + 5,
  });
  return message(
    { type: 'OffsetCommitted', event },
    shape.names.committed(shape.source, key),
    committedMessageId(shape.source, commit.version),
  );
}

function translatedMessage(
  shape: HealthWorkloadShape,
  key: GroupPartition,
  commit: CommitPoint,
  targetOffset: number,
) {
  const event = OffsetTranslated.fromPartial({
    sourceCluster: shape.source,
    targetCluster: shape.target,
    ...key,
    sourceOffset: commit.offset,
    targetOffset,
    outcome: TranslationOutcome.TRANSLATION_OUTCOME_EXACT,
    method: TranslationMethod.TRANSLATION_METHOD_DELTA_PROBE,
    version: commit.version,
    sourceCommitTimestampMs: commit.atMs,
    observedAtMs: commit.atMs + 5,
    translatedAtMs: commit.atMs + 15,
    attempts: 1,
  });
  return message(
    { type: 'OffsetTranslated', event },
    shape.names.translated(shape.source, shape.target, key),
    translatedMessageId(shape.source, shape.target, commit.version, { final: true, revision: 0 }),
  );
}

function appliedMessage(
  shape: HealthWorkloadShape,
  key: GroupPartition,
  commit: CommitPoint,
  targetOffset: number,
) {
  const event = OffsetApplied.fromPartial({
    sourceCluster: shape.source,
    targetCluster: shape.target,
    ...key,
    sourceOffset: commit.offset,
    targetOffset,
    exact: true,
    outcome: ApplyOutcome.APPLY_OUTCOME_APPLIED,
    version: commit.version,
    sourceCommitTimestampMs: commit.atMs,
    appliedAtMs: commit.atMs + 25,
  });
  return message(
    { type: 'OffsetApplied', event },
    shape.names.applied(shape.source, shape.target, key),
    appliedMessageId(shape.source, shape.target, commit.version, 'APPLIED'),
  );
}

/**
 * What the collector publishes when a group is deleted on the source: Kafka writes a tombstone for each
 * of its offsets and one for the group, and the collector turns each into an OffsetDeleted (the offset's
 * on the partition's subject, where it replaces the commit; the group's on the group's subject).
 * `versions` are the tombstones' positions: one per partition, then the group's.
 */
export function groupDeletionEvents(
  shape: HealthWorkloadShape,
  group: number,
  versions: readonly Version[],
  atMs: number,
): StreamMessage[] {
  if (versions.length !== shape.partitions + 1)
    throw new RangeError(
      `a deletion of ${shape.partitions} partitions takes ${shape.partitions + 1} versions`,
    );
  const name = groupName(group);
  const topic = topicOf(shape, group);
  return versions.map((version, i) => {
    const wholeGroup = i === shape.partitions;
    const event = OffsetDeleted.fromPartial({
      sourceCluster: shape.source,
      group: name,
      topic: wholeGroup ? '' : topic,
      partition: wholeGroup ? -1 : i,
      reason: wholeGroup
        ? DeletionReason.DELETION_REASON_GROUP_DELETED
        : DeletionReason.DELETION_REASON_OFFSET_DELETED,
      version,
      observedAtMs: atMs,
    });
    return message(
      { type: 'OffsetDeleted', event },
      wholeGroup
        ? shape.names.committedGroup(shape.source, name)
        : shape.names.committed(shape.source, { group: name, topic, partition: i }),
      committedMessageId(shape.source, version),
    );
  });
}

/** A heartbeat as the services publish it: no message id, one subject per instance. */
export interface HeartbeatMessage {
  subject: string;
  payload: Uint8Array;
  headers: StreamMessage['headers'];
}

/** The roles whose heartbeats make health see the link running end to end. */
const BEATING_ROLES = [
  ServiceRole.SERVICE_ROLE_COLLECTOR,
  ServiceRole.SERVICE_ROLE_TRANSLATOR,
  ServiceRole.SERVICE_ROLE_COMMITTER,
] as const;

/** One heartbeat of a collector, a translator and a committer of the link, sent at `nowMs`. */
export function heartbeatMessages(
  shape: HealthWorkloadShape,
  times: { startedAtMs: number; nowMs: number; intervalMs: number },
): HeartbeatMessage[] {
  return BEATING_ROLES.map((role) => {
    const instanceId = `bench-${ServiceRole[role].replace('SERVICE_ROLE_', '').toLowerCase()}`;
    const event = Heartbeat.fromPartial({
      role,
      instanceId,
      sourceClusters: [shape.source],
      targetCluster: role === ServiceRole.SERVICE_ROLE_COLLECTOR ? '' : shape.target,
      softwareVersion: 'bench',
      startedAtMs: times.startedAtMs,
      sentAtMs: times.nowMs,
      intervalMs: times.intervalMs,
      progress: Progress.fromPartial({ pending: 0, lastEventAtMs: times.nowMs }),
    });
    const subject = shape.names.heartbeat(role, instanceId);
    const encoded = encodeEvent({ type: 'Heartbeat', event }, { subject });
    return { subject, payload: encoded.payload, headers: encoded.headers };
  });
}

/**
 * The group whose one partition tells how far health has read: it sorts after every benchmark group, so
 * it is the last of the listing.
 */
export const SENTINEL_GROUP = 'zz-bench-sentinel';
const SENTINEL_TOPIC = 'bench.health.sentinel';

/**
 * The sentinel's events for `marker` (a positive number, larger at every call), to be published after
 * everything health should have read first: a commit at offset `marker`, its translation to
 * `marker + 1` and a commit on the target at `marker`. Each stream is read in order, so once GetGroup
 * shows all three (see {@link sentinelRead}) health has read each stream up to them.
 */
export function sentinelEvents(shape: HealthWorkloadShape, marker: number, version: Version, atMs: number) {
  const key = { group: SENTINEL_GROUP, topic: SENTINEL_TOPIC, partition: 0 };
  const commit = { offset: marker, version, atMs };
  return [
    committedMessage(shape, key, commit),
    translatedMessage(shape, key, commit, marker + 1),
    appliedMessage(shape, key, commit, marker),
  ];
}

/**
 * Whether the sentinel's status shows the events of `marker` from all three streams: the source offset
 * is the commit's (committed stream), the target offset the committer's (applied stream), and a consumer
 * moving now would read the one record between the committed target offset and the translation's
 * (translated stream: an older translation, of another version, leaves that count unknown or 0).
 */
export function sentinelRead(partitions: readonly PartitionStatus[], marker: number): boolean {
  const status = partitions.find((p) => p.topic === SENTINEL_TOPIC && p.partition === 0);
  return (
    status !== undefined &&
    status.sourceOffset === marker &&
    status.targetOffset === marker &&
    status.replayIfMoved === 1
  );
}
