import { describe, expect, it } from 'vitest';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import { ProblemBoard } from './problem-board.js';

const unreachable = new OffsetSyncError('cannot read', {
  code: ErrorCodes.KAFKA_UNREACHABLE,
  cause: new Error('connection refused'),
});
const brokerError = new OffsetSyncError('broker said no', { code: ErrorCodes.KAFKA_BROKER_ERROR });

describe('problem board', () => {
  it('keeps when an outage started, shows the cause, and clears when it is over', () => {
    let now = 1000;
    const board = new ProblemBoard(() => now);
    board.fail('kafka', unreachable);
    now = 5000;
    board.fail('kafka', unreachable);
    expect(board.list()).toEqual([
      { code: 'KAFKA_UNREACHABLE', detail: 'cannot read: connection refused', sinceMs: 1000 },
    ]);
    board.recover('kafka');
    expect(board.list()).toEqual([]);
  });

  it('clears a problem of any code once its area recovers (a broker error does not outlive the outage)', () => {
    const board = new ProblemBoard(() => 1);
    board.fail('kafka', unreachable);
    board.fail('kafka', brokerError);
    expect(board.list().map((p) => p.code)).toEqual(['KAFKA_BROKER_ERROR']);
    board.recover('kafka');
    expect(board.list()).toEqual([]);
  });

  it('files each error under its own code, INTERNAL only for what offsetsync did not classify', () => {
    const board = new ProblemBoard(() => 1);
    board.fail('kafka', brokerError);
    board.fail('nats', new Error('bug'));
    expect(board.list()).toEqual([
      { code: 'KAFKA_BROKER_ERROR', detail: 'broker said no', sinceMs: 1 },
      { code: 'INTERNAL', detail: 'bug', sinceMs: 1 },
    ]);
  });

  it('shows one problem per code, since the earliest area that has it', () => {
    let now = 10;
    const board = new ProblemBoard(() => now);
    board.fail('read', unreachable);
    now = 20;
    board.fail('commit', unreachable);
    expect(board.list()).toEqual([
      { code: 'KAFKA_UNREACHABLE', detail: 'cannot read: connection refused', sinceMs: 10 },
    ]);
    board.recover('read');
    expect(board.list()).toEqual([
      { code: 'KAFKA_UNREACHABLE', detail: 'cannot read: connection refused', sinceMs: 20 },
    ]);
  });
});
