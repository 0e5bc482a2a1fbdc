import { describe, expect, it } from 'vitest';
import { seededRandom } from './commit-workload.js';
import { GroupPopulation } from './group-churn.js';

describe('GroupPopulation', () => {
  it('deletes a share of distinct live groups and adds as many never-used ones', () => {
    const population = new GroupPopulation(100);
    const random = seededRandom(7);
    const before = new Set(population.live);
    const round = population.churn(0.2, random);
    expect(round.deleted).toHaveLength(20);
    expect(new Set(round.deleted).size).toBe(20);
    expect(round.deleted.every((g) => before.has(g))).toBe(true);
    expect(round.added).toEqual(Array.from({ length: 20 }, (_, i) => 100 + i));
    const after = new Set(population.live);
    expect(after.size).toBe(100);
    expect(round.deleted.some((g) => after.has(g))).toBe(false);
    expect(round.added.every((g) => after.has(g))).toBe(true);
    expect(population.everUsed).toBe(120);
  });

  it('keeps the live count over rounds and never brings a deleted group back', () => {
    const population = new GroupPopulation(50);
    const random = seededRandom(3);
    const deleted = new Set<number>();
    for (let round = 0; round < 5; round++) {
      const { deleted: gone } = population.churn(0.2, random);
      for (const g of gone) deleted.add(g);
      expect(population.live).toHaveLength(50);
      expect(population.live.some((g) => deleted.has(g))).toBe(false);
    }
    expect(deleted.size).toBe(50);
    expect(population.everUsed).toBe(100);
  });

  it('picks only live groups', () => {
    const population = new GroupPopulation(10);
    const random = seededRandom(1);
    const { deleted } = population.churn(0.5, random);
    for (let i = 0; i < 200; i++) expect(deleted).not.toContain(population.pick(random));
  });

  it('rejects a fraction outside [0, 1]', () => {
    expect(() => new GroupPopulation(10).churn(1.5, Math.random)).toThrow(RangeError);
  });
});
