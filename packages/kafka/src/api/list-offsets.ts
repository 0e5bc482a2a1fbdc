// ListOffsets as the broker answers it, one request per leader broker. kafkajs' admin would report the
// high watermark where the broker says -1 ("no record with timestamp >= T yet"); the translator needs the
// -1 to know that a record has not been replicated yet.
import type { OffsetSyncError } from '@offsetsync/contracts';
import type { ItemOutcome } from '../network/leader-routing.js';
import { sendRequest } from '../network/send-request.js';
import { ISOLATION_CODES, type ListOffsetsArgs } from '../protocol/requests.js';
import type { ListOffsetsResponse } from '../protocol/responses.js';
import { groupByTopic, partitionKey } from '../protocol/topic-partitions.js';
import type { IsolationLevel, OffsetAnswer, OffsetQuery, PartitionBounds, TopicPartition } from '../types.js';
import type { CallContext } from './call-context.js';

const EARLIEST_TIMESTAMP = -2;
const LATEST_TIMESTAMP = -1;

/**
 * For a timestamp, the first offset whose record timestamp is >= it, or -1 when there is none yet; the
 * log start or end for `earliest` and `latest`. Answers come in query order. Isolation (default
 * read_committed) bounds 'latest' and timestamp lookups by the last stable offset.
 */
export async function listOffsets(
  context: CallContext,
  queries: readonly OffsetQuery[],
  options: { isolation?: IsolationLevel } = {},
): Promise<OffsetAnswer[]> {
  await context.ready();
  const isolationLevel = ISOLATION_CODES[options.isolation ?? 'read_committed'];
  const failed = (q: OffsetQuery, error: OffsetSyncError): OffsetAnswer => ({
    topic: q.topic,
    partition: q.partition,
    offset: -1,
    timestamp: -1,
    error,
  });
  return context.leaders.perLeader('listOffsets', queries, failed, async (broker, batch) =>
    listOffsetsOutcomes(await sendRequest(broker, 'ListOffsets', listOffsetsArgs(batch, isolationLevel))),
  );
}

/**
 * The log start offset and the high watermark (the log end) of each partition, in request order, or the
 * error that kept a partition from being read (for example a missing topic). One ListOffsets pair per
 * broker. Read uncommitted: the high watermark, not the last stable offset.
 */
export async function partitionBounds(
  context: CallContext,
  partitions: readonly TopicPartition[],
): Promise<Array<PartitionBounds | OffsetSyncError>> {
  const answers = await listOffsets(
    context,
    partitions.flatMap((tp) => [
      { topic: tp.topic, partition: tp.partition, timestamp: 'earliest' as const },
      { topic: tp.topic, partition: tp.partition, timestamp: 'latest' as const },
    ]),
    { isolation: 'read_uncommitted' },
  );
  return partitions.map((_, i) => {
    const earliest = answers[2 * i];
    const latest = answers[2 * i + 1];
    const error = earliest?.error ?? latest?.error;
    if (error !== undefined) return error;
    return { logStartOffset: earliest?.offset ?? -1, highWatermark: latest?.offset ?? -1 };
  });
}

/** The ListOffsets request for one leader's batch of queries. */
function listOffsetsArgs(batch: readonly OffsetQuery[], isolationLevel: number): ListOffsetsArgs {
  const topics = [...groupByTopic(batch)].map(([topic, items]) => ({
    topic,
    partitions: items.map((q) => ({ partition: q.partition, timestamp: timestampCode(q.timestamp) })),
  }));
  return { replicaId: -1, isolationLevel, topics };
}

/** Each partition's answer or error code, by partition key. */
function listOffsetsOutcomes(response: ListOffsetsResponse): Map<string, ItemOutcome<OffsetAnswer>> {
  const outcomes = new Map<string, ItemOutcome<OffsetAnswer>>();
  for (const { topic, partitions } of response.responses) {
    for (const p of partitions) {
      const offset = p.offset ?? p.offsets?.[p.offsets.length - 1];
      outcomes.set(
        partitionKey({ topic, partition: p.partition }),
        p.errorCode !== 0
          ? { code: p.errorCode }
          : {
              ok: {
                topic,
                partition: p.partition,
                offset: Number(offset ?? -1),
                timestamp: Number(p.timestamp ?? -1),
              },
            },
      );
    }
  }
  return outcomes;
}

function timestampCode(timestamp: OffsetQuery['timestamp']): number {
  if (timestamp === 'earliest') return EARLIEST_TIMESTAMP;
  if (timestamp === 'latest') return LATEST_TIMESTAMP;
  return timestamp;
}
