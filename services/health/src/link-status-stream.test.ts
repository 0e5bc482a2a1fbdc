import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LinkState, LinkStatus } from '@offsetsync/contracts';
import { LinkStatusStream } from './link-status-stream.js';

/** A stream that takes `room` writes before it is full, and as many again after each drain. */
class SlowClient {
  written: LinkStatus[] = [];
  private drainListeners: Array<() => void> = [];
  private left: number;

  constructor(private readonly room: number) {
    this.left = room;
  }

  write(status: LinkStatus): boolean {
    this.written.push(status);
    this.left -= 1;
    return this.left > 0;
  }

  once(_event: 'drain', listener: () => void): void {
    this.drainListeners.push(listener);
  }

  drain(): void {
    this.left = this.room;
    const listeners = this.drainListeners.splice(0);
    for (const listener of listeners) listener();
  }
}

const status = (target: string, state: LinkState) =>
  LinkStatus.fromPartial({ sourceCluster: 's', targetCluster: target, state });
const { LINK_STATE_HEALTHY: HEALTHY, LINK_STATE_STALLED: STALLED, LINK_STATE_DOWN: DOWN } = LinkState;

describe('LinkStatusStream', () => {
  it('writes at once while the client keeps up', () => {
    const client = new SlowClient(100);
    const stream = new LinkStatusStream(client);
    stream.send(status('a', HEALTHY));
    stream.send(status('b', STALLED));
    expect(client.written.map((s) => s.targetCluster)).toEqual(['a', 'b']);
    expect(stream.waiting).toBe(0);
  });

  it('holds only the newest status of each link while the client is full, and writes them when it drains', () => {
    const client = new SlowClient(1);
    const stream = new LinkStatusStream(client);
    stream.send(status('a', HEALTHY)); // fills the client
    for (let i = 0; i < 10_000; i++) {
      stream.send(status('a', i % 2 === 0 ? STALLED : DOWN));
      stream.send(status('b', HEALTHY));
    }
    expect(stream.waiting).toBe(2);
    expect(client.written).toHaveLength(1);
    client.drain(); // room for one: 'a', then full again
    client.drain();
    expect(client.written.map((s) => [s.targetCluster, s.state])).toEqual([
      ['a', HEALTHY],
      ['a', DOWN],
      ['b', HEALTHY],
    ]);
    expect(stream.waiting).toBe(0);
  });

  it('ends with every link at its newest status, holding at most one per link (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({
              target: fc.constantFrom('a', 'b', 'c'),
              state: fc.constantFrom(HEALTHY, STALLED, DOWN),
            }),
            fc.constant('drain' as const),
          ),
          { maxLength: 200 },
        ),
        fc.integer({ min: 1, max: 4 }),
        (steps, room) => {
          const client = new SlowClient(room);
          const stream = new LinkStatusStream(client);
          const newest = new Map<string, LinkState>();
          for (const step of steps) {
            if (step === 'drain') client.drain();
            else {
              stream.send(status(step.target, step.state));
              newest.set(step.target, step.state);
            }
            expect(stream.waiting).toBeLessThanOrEqual(3);
          }
          for (let i = 0; i < 5; i++) client.drain();
          const last = new Map<string, LinkState>();
          for (const s of client.written) last.set(s.targetCluster, s.state);
          expect(last).toEqual(newest);
        },
      ),
    );
  });
});
