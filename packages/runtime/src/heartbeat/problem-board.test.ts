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
      { code: 'KAFKA_UNREACHABLE', detail: 'cannot read: connection refused', sinceMs: 1000, resource: '' },
    ]);
    board.recover('kafka');
    expect(board.list()).toEqual([]);
  });

  it('says a problem is new when its area had none, or one of another code or resource, not on a retry', () => {
    const board = new ProblemBoard(() => 1);
    const denied = (resource: string) =>
      new OffsetSyncError(`not authorized on ${resource}`, {
        code: ErrorCodes.NOT_AUTHORIZED,
        details: { resource },
      });
    expect(board.fail('read', unreachable)).toBe(true);
    expect(board.fail('read', unreachable)).toBe(false);
    expect(board.fail('read', brokerError)).toBe(true);
    expect(board.fail('read', denied('TOPIC:a'))).toBe(true);
    expect(board.fail('read', denied('TOPIC:a'))).toBe(false);
    expect(board.fail('read', denied('TOPIC:b'))).toBe(true);
    expect(board.fail('commit', denied('TOPIC:b'))).toBe(true);
    board.recover('read');
    expect(board.fail('read', denied('TOPIC:b'))).toBe(true);
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
      { code: 'KAFKA_BROKER_ERROR', detail: 'broker said no', sinceMs: 1, resource: '' },
      { code: 'INTERNAL', detail: 'bug', sinceMs: 1, resource: '' },
    ]);
  });

  it('shows one problem per code, since the earliest area that has it', () => {
    let now = 10;
    const board = new ProblemBoard(() => now);
    board.fail('read', unreachable);
    now = 20;
    board.fail('commit', unreachable);
    expect(board.list()).toEqual([
      { code: 'KAFKA_UNREACHABLE', detail: 'cannot read: connection refused', sinceMs: 10, resource: '' },
    ]);
    board.recover('read');
    expect(board.list()).toEqual([
      { code: 'KAFKA_UNREACHABLE', detail: 'cannot read: connection refused', sinceMs: 20, resource: '' },
    ]);
  });

  it('keeps problems of one code about different resources apart, each naming its resource', () => {
    const board = new ProblemBoard(() => 5);
    const denied = (resource: string) =>
      new OffsetSyncError(`not authorized: missing ACL ALLOW READ on ${resource}`, {
        code: ErrorCodes.NOT_AUTHORIZED,
        details: { resource },
      });
    board.fail('commit', denied('GROUP:app'));
    board.fail('read', denied('TOPIC:orders'));
    expect(board.list().map((p) => [p.code, p.resource])).toEqual([
      ['NOT_AUTHORIZED', 'GROUP:app'],
      ['NOT_AUTHORIZED', 'TOPIC:orders'],
    ]);
    board.recover('commit');
    expect(board.list().map((p) => p.resource)).toEqual(['TOPIC:orders']);
  });
});
