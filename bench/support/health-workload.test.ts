import { describe, expect, it } from 'vitest';
import {
  decodeEvent,
  Names,
  PartitionStatus,
  ServiceRole,
  type EventType,
  type OffsetSyncEvent,
} from '@offsetsync/contracts';
import type { StreamMessage } from '@offsetsync/jetstream';
import {
  commitEvents,
  groupDeletionEvents,
  groupName,
  heartbeatMessages,
  SENTINEL_GROUP,
  sentinelEvents,
  sentinelRead,
  topicOf,
  VersionClock,
  type HealthWorkloadShape,
} from './health-workload.js';

const ALL: EventType[] = [
  'OffsetCommitted',
  'OffsetDeleted',
  'OffsetTranslated',
  'OffsetApplied',
  'Heartbeat',
];
const names = new Names('hb');
const shape: HealthWorkloadShape = { names, source: 'src', target: 'dst', partitions: 4, topics: 10 };

function decoded(message: Pick<StreamMessage, 'headers' | 'payload'>): OffsetSyncEvent {
  const result = decodeEvent({ headers: message.headers, data: message.payload }, { accept: ALL });
  if (!result.ok) throw new Error(`${result.reason}: ${result.detail}`);
  return { type: result.type, event: result.event } as OffsetSyncEvent;
}

describe('commitEvents', () => {
  it('gives the committed, translated and applied event of one commit on their subjects', () => {
    const version = new VersionClock().take(12);
    const messages = commitEvents(shape, { group: 12, partition: 3, offset: 500, version, atMs: 1_000 });
    const key = { group: groupName(12), topic: topicOf(shape, 12), partition: 3 };
    expect(messages.map((m) => m.subject)).toEqual([
      names.committed('src', key),
      names.translated('src', 'dst', key),
      names.applied('src', 'dst', key),
    ]);
    const [committed, translated, applied] = messages.map(decoded);
    expect(committed).toMatchObject({
      type: 'OffsetCommitted',
      event: { ...key, sourceCluster: 'src', committedOffset: 500, version },
    });
    expect(translated).toMatchObject({
      type: 'OffsetTranslated',
      event: { ...key, targetCluster: 'dst', sourceOffset: 500, version },
    });
    expect(applied).toMatchObject({ type: 'OffsetApplied', event: { ...key, sourceOffset: 500, version } });
    expect(new Set(messages.map((m) => m.msgId)).size).toBe(3);
  });

  it('names groups so that the listing order is the index order', () => {
    expect(groupName(9) < groupName(10)).toBe(true);
    expect(groupName(99_999_999) < SENTINEL_GROUP).toBe(true);
  });
});

describe('VersionClock', () => {
  it('hands out ever newer versions, each group on one offsets partition', () => {
    const clock = new VersionClock();
    const a = clock.take(7);
    const b = clock.take(7);
    const c = clock.take(57);
    expect(a.offsetsPartition).toBe(b.offsetsPartition);
    expect(c.offsetsPartition).toBe(a.offsetsPartition);
    expect(b.offsetsOffset).toBeGreaterThan(a.offsetsOffset);
    expect(c.offsetsOffset).toBeGreaterThan(b.offsetsOffset);
  });
});

describe('groupDeletionEvents', () => {
  it('deletes every partition on its own subject, then the whole group', () => {
    const clock = new VersionClock();
    const versions = Array.from({ length: shape.partitions + 1 }, () => clock.take(5));
    const messages = groupDeletionEvents(shape, 5, versions, 2_000);
    expect(messages).toHaveLength(5);
    const events = messages.map(decoded);
    expect(events.every((e) => e.type === 'OffsetDeleted')).toBe(true);
    expect(events.map((e) => (e.type === 'OffsetDeleted' ? e.event.partition : NaN))).toEqual([
      0, 1, 2, 3, -1,
    ]);
    expect(messages[0]?.subject).toBe(
      names.committed('src', { group: groupName(5), topic: topicOf(shape, 5), partition: 0 }),
    );
    expect(messages[4]?.subject).toBe(names.committedGroup('src', groupName(5)));
  });

  it('wants a version for each tombstone', () => {
    expect(() => groupDeletionEvents(shape, 5, [], 0)).toThrow(RangeError);
  });
});

describe('heartbeatMessages', () => {
  it('beats for a collector of the source and a translator and committer of the link', () => {
    const beats = heartbeatMessages(shape, { startedAtMs: 1, nowMs: 5, intervalMs: 1_000 }).map(decoded);
    expect(beats.map((b) => (b.type === 'Heartbeat' ? [b.event.role, b.event.targetCluster] : []))).toEqual([
      [ServiceRole.SERVICE_ROLE_COLLECTOR, ''],
      [ServiceRole.SERVICE_ROLE_TRANSLATOR, 'dst'],
      [ServiceRole.SERVICE_ROLE_COMMITTER, 'dst'],
    ]);
  });
});

describe('sentinelRead', () => {
  const marker = 42;
  const [, translated] = sentinelEvents(shape, marker, { offsetsPartition: 0, offsetsOffset: 9 }, 0).map(
    decoded,
  );
  const topic = translated?.type === 'OffsetTranslated' ? translated.event.topic : '';
  const status = (fields: Partial<PartitionStatus>) =>
    PartitionStatus.fromPartial({ topic, partition: 0, ...fields });

  it('holds once all three streams are read up to the marker', () => {
    expect(sentinelRead([status({ sourceOffset: 42, targetOffset: 42, replayIfMoved: 1 })], marker)).toBe(
      true,
    );
  });

  it('does not hold while one stream is behind', () => {
    // committed, applied, translated behind in turn
    expect(sentinelRead([status({ sourceOffset: 41, targetOffset: 42, replayIfMoved: -1 })], marker)).toBe(
      false,
    );
    expect(sentinelRead([status({ sourceOffset: 42, targetOffset: 41, replayIfMoved: 2 })], marker)).toBe(
      false,
    );
    expect(sentinelRead([status({ sourceOffset: 42, targetOffset: 42, replayIfMoved: 0 })], marker)).toBe(
      false,
    );
    expect(sentinelRead([], marker)).toBe(false);
  });

  it('translates the marker one record past the commit on the target', () => {
    expect(translated).toMatchObject({ event: { sourceOffset: 42, targetOffset: 43 } });
  });
});
