import { describe, expect, it } from 'vitest';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import type { AppliedRecord } from '../applied-record.js';
import { commitFate, decisionFate } from './group-apply.js';

const record: AppliedRecord = {
  version: { offsetsPartition: 1, offsetsOffset: 2 },
  targetOffset: 40,
  appliedAtMs: 900,
  sourceCommitTimestampMs: 800,
};

describe('decisionFate', () => {
  it('reports a skip under its reason and a redelivery as applied at its first time; a commit has no fate yet', () => {
    expect(decisionFate({ kind: 'skip', reason: 'TARGET_AHEAD', detail: 'owned' }, 1000)).toEqual({
      kind: 'report',
      counted: 'skipped_target_ahead',
      report: { outcome: 'TARGET_AHEAD', targetOffset: -1, detail: 'owned', appliedAtMs: 1000 },
    });
    expect(decisionFate({ kind: 'already-applied', record }, 1000)).toEqual({
      kind: 'report',
      counted: 'already_applied',
      report: {
        outcome: 'APPLIED',
        targetOffset: 40,
        detail: 'already committed on the target (redelivered)',
        appliedAtMs: 900,
      },
    });
    expect(decisionFate({ kind: 'apply', record, reserve: true }, 1000)).toBeUndefined();
  });
});

describe('commitFate', () => {
  it('maps each answer of the broker to what the event reports', () => {
    expect(commitFate({ kind: 'committed' }, 40, 1000)).toMatchObject({
      counted: 'applied',
      report: { outcome: 'APPLIED', targetOffset: 40, appliedAtMs: 1000 },
    });
    expect(commitFate({ kind: 'active' }, 40, 1000)).toMatchObject({
      counted: 'skipped_active_on_target',
      report: { outcome: 'ACTIVE_ON_TARGET', targetOffset: -1 },
    });
    const error = new OffsetSyncError('moving', { code: ErrorCodes.KAFKA_BROKER_ERROR, retryable: true });
    expect(commitFate({ kind: 'retry', error }, 40, 1000)).toEqual({ kind: 'retry', error });
    expect(commitFate({ kind: 'failed', detail: 'KAFKA_BROKER_ERROR: no' }, 40, 1000)).toMatchObject({
      counted: 'skipped_commit_failed',
      report: { outcome: 'COMMIT_FAILED', targetOffset: -1, detail: 'KAFKA_BROKER_ERROR: no' },
    });
  });
});
