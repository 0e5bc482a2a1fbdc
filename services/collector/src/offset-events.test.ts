// The collector's events on the wire: from the facts behind each golden fixture (made by the build before
// the restructure of issue 13) the collector must make the same subject, message id, headers and bytes.
import { describe, expect, it } from 'vitest';
import {
  decodeEvent,
  DeletionReason,
  Names,
  type EventOf,
  type OffsetCommitted,
  type OffsetDeleted,
} from '@offsetsync/contracts';
import { goldenEvents, goldenMessage, type GoldenEvent } from '@offsetsync/harness';
import { committedEvent, deletedEvent, toStreamMessage, type OutgoingEvent } from './offset-events.js';

const names = new Names('offsetsync');

function received(fixture: GoldenEvent) {
  const decoded = decodeEvent(goldenMessage(fixture), { accept: ['OffsetCommitted', 'OffsetDeleted'] });
  if (!decoded.ok) throw new Error(decoded.detail);
  return decoded;
}

/** The collector's event for the facts an OffsetCommitted carries. */
function fromCommitted(e: OffsetCommitted): OutgoingEvent {
  return committedEvent(
    names,
    e.sourceCluster,
    {
      kind: 'offset-commit',
      keyType: 1,
      valueVersion: 4,
      group: e.group,
      topic: e.topic,
      partition: e.partition,
      offset: e.committedOffset,
      leaderEpoch: e.leaderEpoch,
      metadata: e.metadata,
      commitTimestampMs: e.commitTimestampMs,
      expireTimestampMs: e.expireTimestampMs,
    },
    e.version!,
    {
      status: e.anchorStatus,
      detail: e.anchorDetail,
      ...(e.lastConsumed === undefined ? {} : { lastConsumed: e.lastConsumed }),
      ...(e.nextRecord === undefined ? {} : { nextRecord: e.nextRecord }),
      logStartOffset: e.sourceLogStartOffset,
      logEndOffset: e.sourceLogEndOffset,
      distinctAround: e.distinctAround,
    },
    e.observedAtMs,
  );
}

/** The collector's event for the tombstone an OffsetDeleted reports. */
function fromDeleted(e: OffsetDeleted): OutgoingEvent {
  const record =
    e.reason === DeletionReason.DELETION_REASON_GROUP_DELETED
      ? { kind: 'group-deleted' as const, recordType: 2, group: e.group }
      : {
          kind: 'offset-deleted' as const,
          keyType: 1 as const,
          group: e.group,
          topic: e.topic,
          partition: e.partition,
        };
  return deletedEvent(names, e.sourceCluster, record, e.version!, e.observedAtMs);
}

const collected = goldenEvents().filter((f) => f.type === 'OffsetCommitted' || f.type === 'OffsetDeleted');

describe("the collector's events on the wire", () => {
  it('has golden fixtures of both event types it publishes', () => {
    expect(new Set(collected.map((f) => f.type))).toEqual(new Set(['OffsetCommitted', 'OffsetDeleted']));
  });

  it.each(collected.map((f, i) => [`${i} ${f.type} ${f.msgId}`, f] as const))(
    '%s: the same subject, message id, headers and bytes as the build before the restructure',
    (_, fixture) => {
      const decoded = received(fixture);
      const outgoing =
        decoded.type === 'OffsetCommitted'
          ? fromCommitted((decoded as EventOf<'OffsetCommitted'>).event)
          : fromDeleted((decoded as EventOf<'OffsetDeleted'>).event);
      const message = toStreamMessage(outgoing, decoded.trace);
      expect({ subject: message.subject, msgId: message.msgId }).toEqual({
        subject: fixture.subject,
        msgId: fixture.msgId,
      });
      expect(Buffer.from(message.payload).toString('base64')).toBe(fixture.payload);
      const written: Record<string, string> = {};
      for (const k of message.headers?.keys() ?? []) written[k] = message.headers!.get(k);
      expect(written).toEqual(fixture.headers);
    },
  );
});
