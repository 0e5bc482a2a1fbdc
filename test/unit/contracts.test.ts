import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import {
  HealthCheckResponse_ServingStatus,
  HealthService,
} from '../../packages/contracts/src/gen/grpc/health/v1/health.js';
import {
  AnchorStatus,
  Heartbeat,
  OffsetCommitted,
  ServiceRole,
  TimestampType,
} from '../../packages/contracts/src/gen/offsetsync/v1/events.js';
import { OffsetSyncHealthService } from '../../packages/contracts/src/gen/offsetsync/v1/health_service.js';

const ABOVE_2_POW_32 = 2 ** 32 + 17;

function roundTrip<T>(codec: { encode(m: T): { finish(): Uint8Array }; decode(b: Uint8Array): T }, m: T): T {
  return codec.decode(codec.encode(m).finish());
}

function committedEvent(): OffsetCommitted {
  return {
    sourceCluster: 'dc-west',
    // Group ids may hold any character; none of these may be mangled on the way.
    group: 'payments.eu-west.v2 ünïcødé 消费者 🚀',
    topic: 'orders.created',
    partition: 7,
    committedOffset: ABOVE_2_POW_32,
    commitTimestampMs: 1_733_140_800_123,
    expireTimestampMs: -1,
    leaderEpoch: -1,
    metadata: 'app-metadata',
    version: { offsetsPartition: 42, offsetsOffset: 9_876_543_210 },
    lastConsumed: {
      offset: ABOVE_2_POW_32 - 1,
      timestampMs: 1_733_140_799_000,
      timestampType: TimestampType.TIMESTAMP_TYPE_CREATE_TIME,
      fingerprint: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
      keySize: -1,
      valueSize: 512,
    },
    nextRecord: {
      offset: ABOVE_2_POW_32,
      timestampMs: 1_733_140_799_500,
      timestampType: TimestampType.TIMESTAMP_TYPE_CREATE_TIME,
      fingerprint: '60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752',
      keySize: 16,
      valueSize: 0,
    },
    anchorStatus: AnchorStatus.ANCHOR_STATUS_RESOLVED,
    anchorDetail: '',
    sourceLogStartOffset: 1_000,
    sourceLogEndOffset: ABOVE_2_POW_32 + 100,
    observedAtMs: 1_733_140_800_200,
    distinctAround: 1_000,
  };
}

describe('OffsetCommitted', () => {
  it('survives binary encode and decode with both anchors and an unusual group id', () => {
    const event = committedEvent();
    expect(roundTrip(OffsetCommitted, event)).toEqual(event);
  });

  it('survives toJSON and fromJSON', () => {
    const event = committedEvent();
    expect(OffsetCommitted.fromJSON(OffsetCommitted.toJSON(event))).toEqual(event);
  });

  it('leaves absent anchors absent', () => {
    const { nextRecord: _next, ...caughtUp } = committedEvent();
    const decoded = roundTrip(OffsetCommitted, {
      ...caughtUp,
      anchorStatus: AnchorStatus.ANCHOR_STATUS_LOG_END,
    });
    expect(decoded.nextRecord).toBeUndefined();
    expect(decoded.lastConsumed).toEqual(caughtUp.lastConsumed);
  });

  it('keeps int64 offsets above 2^32 exact', () => {
    const decoded = roundTrip(OffsetCommitted, committedEvent());
    expect(decoded.committedOffset).toBe(ABOVE_2_POW_32);
    expect(decoded.version?.offsetsOffset).toBe(9_876_543_210);
    expect(decoded.sourceLogEndOffset).toBe(ABOVE_2_POW_32 + 100);
  });

  it('keeps every safe-integer offset exact', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), fc.integer({ min: 0, max: 2 ** 31 - 1 }), (offset, partition) => {
        const decoded = roundTrip(
          OffsetCommitted,
          OffsetCommitted.fromPartial({ committedOffset: offset, partition }),
        );
        expect(decoded.committedOffset).toBe(offset);
        expect(decoded.partition).toBe(partition);
      }),
    );
  });
});

describe('Heartbeat', () => {
  it('survives encode and decode with a map, repeated fields and nested messages', () => {
    const heartbeat: Heartbeat = {
      role: ServiceRole.SERVICE_ROLE_TRANSLATOR,
      instanceId: 'translator-7f9c',
      sourceClusters: ['dc-west', 'dc-east'],
      observedSourceClusters: [],
      targetCluster: 'dc-north',
      softwareVersion: '0.1.0',
      startedAtMs: 1_733_140_000_000,
      sentAtMs: 1_733_140_805_000,
      intervalMs: 5_000,
      progress: {
        lastVersion: { offsetsPartition: 3, offsetsOffset: ABOVE_2_POW_32 },
        eventsByOutcome: { EXACT: 12_345, INEXACT: 2, PENDING: ABOVE_2_POW_32 },
        pending: 4,
        lastEventAtMs: 1_733_140_804_900,
      },
      problems: [
        {
          code: 'KAFKA_UNREACHABLE',
          detail: 'dc-north: connect ECONNREFUSED',
          sinceMs: 1_733_140_700_000,
          resource: 'CLUSTER:dc-north',
        },
      ],
    };
    expect(roundTrip(Heartbeat, heartbeat)).toEqual(heartbeat);
    expect(Heartbeat.fromJSON(Heartbeat.toJSON(heartbeat))).toEqual(heartbeat);
  });
});

describe('gRPC service definitions', () => {
  it('use the standard grpc.health.v1 method paths', () => {
    expect(HealthService.check.path).toBe('/grpc.health.v1.Health/Check');
    expect(HealthService.check.requestStream).toBe(false);
    expect(HealthService.check.responseStream).toBe(false);
    expect(HealthService.watch.path).toBe('/grpc.health.v1.Health/Watch');
    expect(HealthService.watch.requestStream).toBe(false);
    expect(HealthService.watch.responseStream).toBe(true);
  });

  it('serialize health responses with the standard status numbers', () => {
    const bytes = HealthService.check.responseSerialize({
      status: HealthCheckResponse_ServingStatus.SERVING,
    });
    // Field 1, varint, value 1: what every grpc.health.v1 client expects for SERVING.
    expect([...bytes]).toEqual([0x08, 0x01]);
    expect(HealthService.check.responseDeserialize(bytes).status).toBe(
      HealthCheckResponse_ServingStatus.SERVING,
    );
  });

  it('expose the offsetsync health API under its package name', () => {
    expect(OffsetSyncHealthService.watchLinks.path).toBe('/offsetsync.v1.OffsetSyncHealth/WatchLinks');
    expect(OffsetSyncHealthService.watchLinks.responseStream).toBe(true);
    expect(OffsetSyncHealthService.listLinks.path).toBe('/offsetsync.v1.OffsetSyncHealth/ListLinks');
    expect(OffsetSyncHealthService.getGroup.path).toBe('/offsetsync.v1.OffsetSyncHealth/GetGroup');
    expect(OffsetSyncHealthService.listGroups.path).toBe('/offsetsync.v1.OffsetSyncHealth/ListGroups');
  });
});
