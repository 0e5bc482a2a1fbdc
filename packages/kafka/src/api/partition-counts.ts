// How many partitions each topic has, from one Metadata request.
import type { CallContext } from './call-context.js';

/** Partition count of each topic that exists; topics missing on the cluster are absent. */
export async function partitionCounts(
  context: CallContext,
  topics: readonly string[],
): Promise<Map<string, number>> {
  await context.ready();
  const unique = [...new Set(topics)];
  const states = await context.metadata.read(unique);
  const counts = new Map<string, number>();
  for (const topic of unique) {
    const state = states.get(topic);
    if (state?.kind === 'present') counts.set(topic, state.leaders.size);
    else if (state?.kind === 'failed') throw state.error;
  }
  return counts;
}
