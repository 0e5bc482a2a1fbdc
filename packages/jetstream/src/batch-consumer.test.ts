import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { failedBatchStep, pullSize, takeBatch } from './batch-consumer.js';

describe('pullSize', () => {
  it('asks for the room left when there is room for a pull', () => {
    expect(pullSize(0, 1000, 250)).toBe(1000);
    expect(pullSize(600, 1000, 250)).toBe(400);
  });

  it('asks for nothing while the room is less than one pull', () => {
    expect(pullSize(800, 1000, 250)).toBe(0);
    expect(pullSize(1000, 1000, 250)).toBe(0);
  });

  it('never lets the held messages exceed the bound', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5000 }),
        fc.integer({ min: 1, max: 5000 }),
        fc.integer({ min: 1, max: 5000 }),
        (held, maxHeld, minPull) => {
          const size = pullSize(held, maxHeld, minPull);
          expect(size).toBeGreaterThanOrEqual(0);
          expect(size === 0 || held + size <= maxHeld).toBe(true);
          if (held === 0) expect(size).toBe(maxHeld);
        },
      ),
    );
  });
});

describe('takeBatch', () => {
  const m = (subject: string, seq: number) => ({ subject, seq });

  it('takes up to maxBatch messages in order and leaves the rest in order', () => {
    const queue = [m('a', 1), m('b', 2), m('a', 3), m('c', 4)];
    expect(takeBatch(queue, 3, new Set()).map((x) => x.seq)).toEqual([1, 2, 3]);
    expect(queue.map((x) => x.seq)).toEqual([4]);
  });

  it('leaves the messages of subjects a running batch handles', () => {
    const queue = [m('a', 1), m('b', 2), m('a', 3), m('c', 4)];
    expect(takeBatch(queue, 10, new Set(['a'])).map((x) => x.seq)).toEqual([2, 4]);
    expect(queue.map((x) => x.seq)).toEqual([1, 3]);
  });

  it('never puts a busy subject in a batch, never loses or repeats a message', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a', 'b', 'c', 'd'), { maxLength: 50 }),
        fc.subarray(['a', 'b', 'c', 'd']),
        fc.integer({ min: 1, max: 20 }),
        (subjects, busy, maxBatch) => {
          const queue = subjects.map((s, i) => m(s, i));
          const batch = takeBatch(queue, maxBatch, new Set(busy));
          expect(batch.length).toBeLessThanOrEqual(maxBatch);
          expect(batch.every((x) => !busy.includes(x.subject))).toBe(true);
          expect([...batch, ...queue].map((x) => x.seq).sort((x, y) => x - y)).toEqual(
            subjects.map((_, i) => i),
          );
          expect(queue.map((x) => x.seq)).toEqual([...queue.map((x) => x.seq)].sort((x, y) => x - y));
        },
      ),
    );
  });
});

describe('failedBatchStep', () => {
  it('redelivers a transient failure whatever the batch, isolates a lasting one, dead-letters a lone one at its last delivery', () => {
    expect(failedBatchStep(10, true, 99, 5)).toBe('redeliver');
    expect(failedBatchStep(1, true, 99, 5)).toBe('redeliver');
    expect(failedBatchStep(2, false, 1, 5)).toBe('isolate');
    expect(failedBatchStep(1, false, 4, 5)).toBe('redeliver');
    expect(failedBatchStep(1, false, 5, 5)).toBe('dead-letter');
  });
});
