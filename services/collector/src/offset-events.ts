// Turns decoded offsets-topic records into the events the collector publishes. Pure.
import {
  DeletionReason,
  OffsetCommitted,
  OffsetDeleted,
  type Names,
  type Version,
} from '@offsetsync/contracts';
import type { AnchorResolution } from './anchor-resolver.js';
import type { OffsetCommitRecord, OffsetDeletedRecord, GroupDeletedRecord } from './offsets-topic-decoder.js';

/** An event ready to publish: subject, bytes, dedup id and what kind of event it is. */
export interface OutgoingEvent {
  subject: string;
  /** `Nats-Msg-Id`: source cluster + offsets-topic partition + offset, so a re-published record is dropped. */
  msgId: string;
  kind: 'OffsetCommitted' | 'OffsetDeleted';
  payload: Uint8Array;
  /** For logs and spans. */
  group: string;
  topic: string;
  partition: number;
}

export function messageId(source: string, version: Version): string {
  return `${source}:${version.offsetsPartition}:${version.offsetsOffset}`;
}

export function committedEvent(
  names: Names,
  source: string,
  record: OffsetCommitRecord,
  version: Version,
  resolution: AnchorResolution,
  observedAtMs: number,
): OutgoingEvent {
  const event = OffsetCommitted.fromPartial({
    sourceCluster: source,
    group: record.group,
    topic: record.topic,
    partition: record.partition,
    committedOffset: record.offset,
    commitTimestampMs: record.commitTimestampMs,
    expireTimestampMs: record.expireTimestampMs,
    leaderEpoch: record.leaderEpoch,
    metadata: record.metadata,
    version,
    lastConsumed: resolution.lastConsumed,
    nextRecord: resolution.nextRecord,
    anchorStatus: resolution.status,
    anchorDetail: resolution.detail,
    sourceLogStartOffset: resolution.logStartOffset,
    sourceLogEndOffset: resolution.logEndOffset,
    observedAtMs,
  });
  return {
    subject: names.committed(source, record),
    msgId: messageId(source, version),
    kind: 'OffsetCommitted',
    payload: OffsetCommitted.encode(event).finish(),
    group: record.group,
    topic: record.topic,
    partition: record.partition,
  };
}

export function deletedEvent(
  names: Names,
  source: string,
  record: OffsetDeletedRecord | GroupDeletedRecord,
  version: Version,
  observedAtMs: number,
): OutgoingEvent {
  const wholeGroup = record.kind === 'group-deleted';
  const topic = wholeGroup ? '' : record.topic;
  const partition = wholeGroup ? -1 : record.partition;
  const event = OffsetDeleted.fromPartial({
    sourceCluster: source,
    group: record.group,
    topic,
    partition,
    // Kafka writes the same tombstone for an offset an admin deleted and one that expired.
    reason: wholeGroup
      ? DeletionReason.DELETION_REASON_GROUP_DELETED
      : DeletionReason.DELETION_REASON_OFFSET_DELETED,
    version,
    observedAtMs,
  });
  return {
    subject: wholeGroup ? names.committedGroup(source, record.group) : names.committed(source, record),
    msgId: messageId(source, version),
    kind: 'OffsetDeleted',
    payload: OffsetDeleted.encode(event).finish(),
    group: record.group,
    topic,
    partition,
  };
}
