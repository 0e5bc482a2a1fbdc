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
});
