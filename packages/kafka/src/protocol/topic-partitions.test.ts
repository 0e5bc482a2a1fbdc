import { describe, expect, it } from 'vitest';
import { wavesOf } from './topic-partitions.js';

describe('wavesOf', () => {
  it('puts each repeat of a partition into a later wave, keeping input order', () => {
    const items = [
      { topic: 'a', partition: 0 },
      { topic: 'a', partition: 1 },
      { topic: 'a', partition: 0 },
      { topic: 'b', partition: 0 },
      { topic: 'a', partition: 0 },
    ];
    expect(wavesOf(items)).toEqual([[0, 1, 3], [2], [4]]);
    expect(wavesOf([])).toEqual([]);
  });
});
