import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pullSize } from './batch-consumer.js';

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
