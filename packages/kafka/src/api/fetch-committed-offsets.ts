// The offsets a group has committed, from one OffsetFetch to its coordinator.
import { brokerError } from '../protocol/broker-errors.js';
import { sendRequest } from '../network/send-request.js';
import type { OffsetFetchResponse } from '../protocol/responses.js';
import type { CommittedOffset } from '../types.js';
import type { CallContext } from './call-context.js';

/** The offsets a group has committed (all topics, or only `topics`); partitions without one are left out. */
export async function fetchCommittedOffsets(
  context: CallContext,
  groupId: string,
  topics?: readonly string[],
): Promise<CommittedOffset[]> {
  await context.ready();
  const response = await context.coordinators.withCoordinator(
    groupId,
    'fetchCommittedOffsets',
    async (broker) => {
      const r = await sendRequest(broker, 'OffsetFetch', { groupId, topics: [] });
      return { result: r, code: r.errorCode ?? 0 };
    },
  );
  return committedOffsets(response, groupId, topics === undefined ? undefined : new Set(topics));
}

/**
 * The committed offsets of the `wanted` topics (all when undefined), sorted by topic and partition. A
 * partition's error code rejects the whole answer.
 */
function committedOffsets(
  response: OffsetFetchResponse,
  groupId: string,
  wanted: ReadonlySet<string> | undefined,
): CommittedOffset[] {
  const committed: CommittedOffset[] = [];
  for (const { topic, partitions } of response.responses) {
    if (wanted !== undefined && !wanted.has(topic)) continue;
    for (const p of partitions) {
      if (p.errorCode !== 0) {
        throw brokerError(p.errorCode, 'fetchCommittedOffsets', { groupId, topic, partition: p.partition });
      }
      const offset = Number(p.offset);
      if (offset < 0) continue;
      committed.push({ topic, partition: p.partition, offset, metadata: p.metadata });
    }
  }
  return committed.sort((a, b) =>
    a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1,
  );
}
