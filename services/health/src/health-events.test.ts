// Reading stream messages into health events: through the contracts' envelope, by stream.
import { headers as natsHeaders } from 'nats';
import { describe, expect, it } from 'vitest';
import {
  ApplyOutcome,
  DeletionReason,
  encodeEvent,
  EVENT_TYPE_HEADER,
  Heartbeat,
  OffsetApplied,
  OffsetCommitted,
  OffsetDeleted,
  OffsetTranslated,
  ServiceRole,
  type EventType,
  type OffsetSyncEvent,
} from '@offsetsync/contracts';
import { goldenEvents, goldenMessage } from '@offsetsync/harness';
import { readHealthEvent, type HealthStream } from './health-events.js';

const STREAM_OF: Record<EventType, HealthStream> = {
  Heartbeat: 'heartbeats',
  OffsetCommitted: 'committed',
  OffsetDeleted: 'committed',
  OffsetTranslated: 'translated',
  OffsetApplied: 'applied',
};

function message(event: OffsetSyncEvent) {
  const { headers, payload } = encodeEvent(event, { subject: 's' });
  return { headers, data: payload };
}

describe('readHealthEvent', () => {
  it('reads every golden fixture on its stream', () => {
    for (const fixture of goldenEvents()) {
      const reading = readHealthEvent(STREAM_OF[fixture.type], goldenMessage(fixture));
      expect(reading.ok, fixture.type).toBe(true);
    }
  });

  it('reduces each event type to what health folds', () => {
    const beat = Heartbeat.fromPartial({
      role: ServiceRole.SERVICE_ROLE_COMMITTER,
      instanceId: 'c-1',
      sourceClusters: ['a'],
      targetCluster: 'b',
      sentAtMs: 7,
      intervalMs: 1000,
      progress: { pending: 3 },
    });
    expect(readHealthEvent('heartbeats', message({ type: 'Heartbeat', event: beat }))).toMatchObject({
      ok: true,
      event: { kind: 'heartbeat', instance: { instanceId: 'c-1', lastHeartbeatMs: 7, pending: 3 } },
    });
    const committed = OffsetCommitted.fromPartial({
      sourceCluster: 'a',
      group: 'g',
      topic: 't',
      committedOffset: 5,
    });
    expect(
      readHealthEvent('committed', message({ type: 'OffsetCommitted', event: committed })),
    ).toMatchObject({
      ok: true,
      // Without a version: older than every versioned event.
      event: { kind: 'committed', fact: { offset: 5, version: { offsetsPartition: -1, offsetsOffset: -1 } } },
    });
    const groupGone = OffsetDeleted.fromPartial({
      sourceCluster: 'a',
      group: 'g',
      partition: -1,
      reason: DeletionReason.DELETION_REASON_GROUP_DELETED,
    });
    const deleted = readHealthEvent('committed', message({ type: 'OffsetDeleted', event: groupGone }));
    expect(deleted).toMatchObject({
      ok: true,
      event: { kind: 'deleted', fact: { detail: 'group deleted' } },
    });
    expect(
      deleted.ok && deleted.event.kind === 'deleted' ? deleted.event.partition : 'not read',
    ).toBeUndefined();
    const translated = OffsetTranslated.fromPartial({
      sourceCluster: 'a',
      targetCluster: 'b',
      targetOffset: 9,
    });
    expect(
      readHealthEvent('translated', message({ type: 'OffsetTranslated', event: translated })),
    ).toMatchObject({
      ok: true,
      event: { kind: 'translated', link: { source: 'a', target: 'b' }, fact: { targetOffset: 9 } },
    });
  });

  it("reads a message without a type header as its stream's one type, and not at all on the committed stream", () => {
    const translated = OffsetTranslated.fromPartial({ sourceCluster: 'a', targetCluster: 'b' });
    const data = OffsetTranslated.encode(translated).finish();
    expect(readHealthEvent('translated', { data }).ok).toBe(true);
    const committed = OffsetCommitted.encode(OffsetCommitted.fromPartial({ group: 'g' })).finish();
    expect(readHealthEvent('committed', { data: committed })).toMatchObject({
      ok: false,
      reason: 'MISSING_TYPE',
    });
  });

  it('names why a message is not read: unknown or unexpected type, undecodable bytes, nothing to fold', () => {
    const headers = natsHeaders();
    headers.set(EVENT_TYPE_HEADER, 'OffsetRewound');
    expect(readHealthEvent('committed', { headers, data: new Uint8Array() })).toMatchObject({
      ok: false,
      reason: 'UNKNOWN_TYPE',
      type: 'OffsetRewound',
    });
    const beat = message({ type: 'Heartbeat', event: Heartbeat.fromPartial({}) });
    expect(readHealthEvent('applied', beat)).toMatchObject({ ok: false, reason: 'UNEXPECTED_TYPE' });
    expect(readHealthEvent('translated', { data: Uint8Array.from([0xff, 0xff, 0xff]) })).toMatchObject({
      ok: false,
      reason: 'UNDECODABLE',
    });
    const noOutcome = OffsetApplied.fromPartial({ outcome: ApplyOutcome.APPLY_OUTCOME_UNSPECIFIED });
    expect(readHealthEvent('applied', message({ type: 'OffsetApplied', event: noOutcome }))).toMatchObject({
      ok: false,
      reason: 'NOT_USED',
    });
  });
});
