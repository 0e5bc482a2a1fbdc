import { describe, expect, it } from 'vitest';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import { ProblemBoard } from './problem-board.js';

describe('problem board', () => {
  it('keeps when an outage started, shows the cause, and clears when it is over', () => {
    let now = 1000;
    const board = new ProblemBoard(() => now);
    const down = new OffsetSyncError('cannot read', {
      code: ErrorCodes.KAFKA_UNREACHABLE,
      cause: new Error('connection refused'),
    });
    board.set('KAFKA_UNREACHABLE', down);
    now = 5000;
    board.set('KAFKA_UNREACHABLE', down);
    expect(board.list()).toEqual([
      { code: 'KAFKA_UNREACHABLE', detail: 'cannot read: connection refused', sinceMs: 1000 },
    ]);
    board.set('KAFKA_UNREACHABLE', undefined);
    expect(board.list()).toEqual([]);
  });
});
