// The event feed's decisions, without NATS: which delivered message is read, when a new consumer is
// needed, how long it waits after failures. (Against nats-server: test/integration/health-event-feed.)
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JetStreamClient, JetStreamManager } from 'nats';
import { Names } from '@offsetsync/contracts';
import { EventFeed, step, type Cursor } from './event-feed.js';

describe('step', () => {
  it('reads a message that continues the delivery sequence and moves the cursor past it', () => {
    expect(step({ nextSequence: 5, lastDelivery: 2 }, { streamSequence: 9, deliverySequence: 3 })).toEqual({
      take: true,
      cursor: { nextSequence: 10, lastDelivery: 3 },
    });
  });

  it('asks for a new consumer when the delivery sequence skips or repeats', () => {
    expect(step({ nextSequence: 5, lastDelivery: 2 }, { streamSequence: 9, deliverySequence: 4 })).toEqual({
      gap: true,
    });
    expect(step({ nextSequence: 5, lastDelivery: 2 }, { streamSequence: 9, deliverySequence: 2 })).toEqual({
      gap: true,
    });
  });

  it('never reads a stream sequence twice nor out of order, whatever a consumer delivers', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ streamSequence: fc.nat(50), deliverySequence: fc.nat(50) }), { maxLength: 60 }),
        (deliveries) => {
          let cursor: Cursor = { nextSequence: 1, lastDelivery: 0 };
          const read: number[] = [];
          for (const delivery of deliveries) {
            const next = step(cursor, delivery);
            // A gap: a new consumer starts at the cursor, with its own delivery sequence.
            if ('gap' in next) cursor = { ...cursor, lastDelivery: 0 };
            else {
              if (next.take) read.push(delivery.streamSequence);
              cursor = next.cursor;
            }
          }
          for (let i = 1; i < read.length; i++) expect(read[i]!).toBeGreaterThan(read[i - 1]!);
        },
      ),
    );
  });
});

describe('EventFeed.start', () => {
  it("rejects, rather than ending the process, when a stream's replay fails while another stream's info is awaited", async () => {
    const names = new Names('osync');
    let infos = 0;
    const jsm = {
      streams: {
        // The first stream answers at once, the second 200 ms later: long enough for a replay started
        // in between to fail.
        info: async () => {
          infos += 1;
          if (infos === 2) await new Promise((resolve) => setTimeout(resolve, 200));
          return { state: { messages: 5, last_seq: 5 } };
        },
      },
      consumers: {
        add: () => Promise.reject(new Error('consumer create timed out')),
      },
    } as unknown as JetStreamManager;
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const feed = new EventFeed({
        js: {} as JetStreamClient,
        names,
        onMessage: () => undefined,
        onFailure: () => undefined,
        onRecovery: () => undefined,
      });
      await expect(feed.start(jsm)).rejects.toThrow('consumer create timed out');
      await feed.stop();
      await new Promise((resolve) => setTimeout(resolve, 300));
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
  });
});
