import { describe, expect, it } from 'vitest';
import { ActiveGroups } from './active-groups.js';

describe('ActiveGroups', () => {
  it('holds a refused group back for the retry period only', () => {
    const groups = new ActiveGroups(1000);
    expect(groups.waitingUntil('g', 0)).toBeUndefined();
    groups.refused('g', 5000);
    expect(groups.waitingUntil('g', 5000)).toBe(6000);
    expect(groups.waitingUntil('g', 5999)).toBe(6000);
    expect(groups.waitingUntil('other', 5999)).toBeUndefined();
    expect(groups.waitingUntil('g', 6000)).toBeUndefined();
    expect(groups.waitingUntil('g', 5500)).toBeUndefined();
  });
});
