// The event feed's decisions, without NATS: which delivered message is read, when a new consumer is
// needed, how long it waits after failures. (Against nats-server: test/integration/health-event-feed.)
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { step, type Cursor } from './event-feed.js';

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
