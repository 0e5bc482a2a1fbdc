import { describe, expect, it } from 'vitest';
import { dueCount } from './event-pump.js';

describe('dueCount', () => {
  it('counts what the rate asks for so far, less what was sent', () => {
    expect(dueCount(2_000, 500, 0)).toBe(1_000);
    expect(dueCount(2_000, 500, 900)).toBe(100);
    expect(dueCount(2_000, 500, 1_200)).toBe(0);
  });
});
