import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { laneOf } from './coordinator-lanes.js';

describe('laneOf', () => {
  it('puts every group on one lane within range, the same one each time', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 64 }), (group, lanes) => {
        const lane = laneOf(group, lanes);
        expect(Number.isInteger(lane) && lane >= 0 && lane < lanes).toBe(true);
        expect(laneOf(group, lanes)).toBe(lane);
      }),
    );
  });

  it('spreads similar group names over the lanes', () => {
    const used = new Set(Array.from({ length: 100 }, (_, i) => laneOf(`group-${i}`, 8)));
    expect(used.size).toBe(8);
  });
});
