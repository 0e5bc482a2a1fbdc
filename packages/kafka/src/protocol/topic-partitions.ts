// Pure helpers over topic partitions that shape requests: a request names each partition once, grouped
// by topic.
import type { TopicPartition } from '../types.js';

/** A map key for a topic partition. */
export function partitionKey(tp: TopicPartition): string {
  return `${tp.partition}:${tp.topic}`;
}

/** Items grouped by topic, each group in input order (requests list partitions under their topic). */
export function groupByTopic<T extends TopicPartition>(items: readonly T[]): Map<string, T[]> {
  const byTopic = new Map<string, T[]>();
  for (const item of items) {
    const list = byTopic.get(item.topic);
    if (list) list.push(item);
    else byTopic.set(item.topic, [item]);
  }
  return byTopic;
}

/**
 * Splits items so that no topic partition occurs twice in one wave: a request may name a partition only
 * once. Returns the item indexes of each wave, in input order. Without repeats there is one wave.
 */
export function wavesOf(items: readonly TopicPartition[]): number[][] {
  const waves: number[][] = [];
  const seen = new Map<string, number>();
  items.forEach((item, index) => {
    const key = partitionKey(item);
    const wave = seen.get(key) ?? 0;
    seen.set(key, wave + 1);
    (waves[wave] ??= []).push(index);
  });
  return waves;
}
