// Turns decoded offsets-topic records into the events the collector publishes, and an event into the
// stream message the envelope of @offsetsync/contracts makes of it. Pure.
import type { Context } from '@opentelemetry/api';
import {
  committedMessageId,
  DeletionReason,
  encodeEvent,
  OffsetCommitted,
  OffsetDeleted,
  type EventOf,
  type Names,
  type Version,
} from '@offsetsync/contracts';
import type { StreamMessage } from '@offsetsync/jetstream';
import type { AnchorResolution } from './anchor-resolver.js';
import type { VersionedRecord } from './commit-coalescer.js';
import type { OffsetCommitRecord, OffsetDeletedRecord, GroupDeletedRecord } from './offsets-topic-decoder.js';

/** An event ready to publish: the event with its type, where it goes and its dedup id. */
export interface OutgoingEvent {
  event: EventOf<'OffsetCommitted'> | EventOf<'OffsetDeleted'>;
  subject: string;
  /**
   * `Nats-Msg-Id` ({@link committedMessageId}): source cluster + offsets-topic partition + offset, so a
   * re-published record is dropped.
   */
  msgId: string;
  /** For logs and spans. */
  group: string;
  topic: string;
  partition: number;
}

/**
 * The stream message of an event: its envelope (type header, trace context of `trace`), protobuf payload
 * and message id.
 */
export function toStreamMessage(outgoing: OutgoingEvent, trace: Context): StreamMessage {
  const encoded = encodeEvent(outgoing.event, { subject: outgoing.subject, msgId: outgoing.msgId, trace });
  return {
    subject: encoded.subject,
    payload: encoded.payload,
    msgId: outgoing.msgId,
    headers: encoded.headers,
  };
}

/** Where and when the events of one batch are made. */
export interface EventOrigin {
  names: Names;
  /** Alias of the source cluster. */
  source: string;
  /** When the batch was read (epoch ms). */
  observedAtMs: number;
}

/**
 * The events of a batch's kept records, in their order: an OffsetCommitted with its anchors for each
 * commit (its resolution in `resolutions`), an OffsetDeleted for each offset or group tombstone.
 */
export function buildEvents(
  kept: readonly VersionedRecord[],
  resolutions: ReadonlyMap<VersionedRecord, AnchorResolution>,
  origin: EventOrigin,
): OutgoingEvent[] {
  const { names, source, observedAtMs } = origin;
  return kept.map((item) => {
    if (item.record.kind !== 'offset-commit') {
      return deletedEvent(names, source, item.record, item.version, observedAtMs);
    }
    const resolution = resolutions.get(item);
    if (resolution === undefined) throw new Error('a commit lost its anchor resolution');
    return committedEvent(names, source, item.record, item.version, resolution, observedAtMs);
  });
}

/** The OffsetCommitted event of a commit, with the anchors resolved for it. */
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
    distinctAround: resolution.distinctAround,
    observedAtMs,
  });
  return {
    event: { type: 'OffsetCommitted', event },
    subject: names.committed(source, record),
    msgId: committedMessageId(source, version),
    group: record.group,
    topic: record.topic,
    partition: record.partition,
  };
}

/** The OffsetDeleted event of an offset tombstone (one partition) or a group tombstone (the whole group). */
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
    event: { type: 'OffsetDeleted', event },
    subject: wholeGroup ? names.committedGroup(source, record.group) : names.committed(source, record),
    msgId: committedMessageId(source, version),
    group: record.group,
    topic,
    partition,
  };
}
