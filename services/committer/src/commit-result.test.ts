import { describe, expect, it } from 'vitest';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import { classifyCommitError, classifyFailure, failureDetail } from './commit-result.js';

describe('commit results', () => {
  it('tells committed, active, transient and permanent apart by code', () => {
    expect(classifyCommitError(undefined)).toEqual({ kind: 'committed' });
    const active = new OffsetSyncError('refused', {
      code: ErrorCodes.GROUP_ACTIVE,
      details: { brokerError: 'UNKNOWN_MEMBER_ID', brokerCode: 25 },
    });
    expect(classifyCommitError(active)).toEqual({ kind: 'active' });
    const moving = new OffsetSyncError('moving', {
      code: ErrorCodes.KAFKA_BROKER_ERROR,
      retryable: true,
      details: { brokerError: 'COORDINATOR_LOAD_IN_PROGRESS', brokerCode: 14 },
    });
    expect(classifyCommitError(moving)).toEqual({ kind: 'retry', error: moving });
    const unknownTopic = new OffsetSyncError('commitOffsets failed', {
      code: ErrorCodes.KAFKA_BROKER_ERROR,
      details: { brokerError: 'UNKNOWN_TOPIC_OR_PARTITION', brokerCode: 3 },
    });
    expect(classifyCommitError(unknownTopic)).toEqual({
      kind: 'failed',
      detail: 'KAFKA_BROKER_ERROR UNKNOWN_TOPIC_OR_PARTITION (3): commitOffsets failed',
    });
    expect(
      classifyFailure(new OffsetSyncError('down', { code: ErrorCodes.KAFKA_UNREACHABLE })),
    ).toMatchObject({ kind: 'retry' });
    expect(classifyFailure(new Error('boom'))).toEqual({ kind: 'failed', detail: 'INTERNAL: boom' });
    expect(failureDetail(new OffsetSyncError('x', { code: ErrorCodes.TIMEOUT }))).toBe('TIMEOUT: x');
  });

  it('retries a commit refused for a missing ACL or a failed login, never skips it as failed', () => {
    for (const code of [ErrorCodes.NOT_AUTHORIZED, ErrorCodes.AUTH_FAILED]) {
      const refused = new OffsetSyncError('commitOffsets failed: not authorized', {
        code,
        details: { resource: 'GROUP:app', missingAcl: 'ALLOW READ on GROUP:app' },
      });
      expect(classifyCommitError(refused)).toEqual({ kind: 'retry', error: refused });
    }
  });

  it('classifies the refusal Kafka 4.1 gives an admin commit to a live KIP-848 consumer-protocol group as active', () => {
    // What KafkaAdapter.commitOffsets answers for each partition then (test/integration/kafka-adapter.test.ts
    // checks it against the real broker with a console consumer, group.protocol=consumer).
    const cause = new OffsetSyncError('commitOffsets failed: broker error UNKNOWN_MEMBER_ID (25)', {
      code: ErrorCodes.KAFKA_BROKER_ERROR,
      details: { brokerError: 'UNKNOWN_MEMBER_ID', brokerCode: 25 },
    });
    const refused = new OffsetSyncError('commit to group g refused: the group has live members', {
      code: ErrorCodes.GROUP_ACTIVE,
      retryable: false,
      cause,
      details: { groupId: 'g', topic: 't', partition: 0, brokerError: 'UNKNOWN_MEMBER_ID', brokerCode: 25 },
    });
    expect(classifyCommitError(refused)).toEqual({ kind: 'active' });
    expect(classifyFailure(refused)).toEqual({ kind: 'active' });
    // The broker's code alone is not enough: only the adapter's GROUP_ACTIVE says "live members".
    expect(classifyCommitError(cause)).toMatchObject({ kind: 'failed' });
  });
});
