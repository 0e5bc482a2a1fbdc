// The topic ids of named topics, from one Metadata v10+ request (protocol/topic-ids.ts) to any broker.
import { toOffsetSyncError } from '../kafka-errors.js';
import { brokerError } from '../protocol/broker-errors.js';
import { TopicIdsApi } from '../protocol/topic-ids.js';
import { sendFlexibleRequest } from '../network/send-request.js';
import type { CallContext } from './call-context.js';

/** Kafka's UNKNOWN_TOPIC_OR_PARTITION: the topic does not exist (an answer, not a failure). */
const UNKNOWN_TOPIC_OR_PARTITION = 3;

/**
 * The id of each topic that exists; a topic the cluster does not have is absent. Another error of a
 * topic rejects (an authorization failure must not read as "deleted").
 */
export async function topicIds(
  context: CallContext,
  topics: readonly string[],
): Promise<Map<string, string>> {
  await context.ready();
  const unique = [...new Set(topics)];
  const ids = new Map<string, string>();
  if (unique.length === 0) return ids;
  const nodeId = context.connection.nodeIds()[0];
  try {
    if (nodeId === undefined) throw new Error('the cluster has no broker to ask');
    const broker = await context.connection.findBroker(nodeId);
    const { response } = await sendFlexibleRequest(broker, TopicIdsApi, { topics: unique });
    for (const answer of response.topics) {
      if (answer.errorCode === UNKNOWN_TOPIC_OR_PARTITION) continue;
      if (answer.errorCode !== 0) throw brokerError(answer.errorCode, 'topicIds', { topic: answer.name });
      if (answer.name !== null) ids.set(answer.name, answer.topicId);
    }
    return ids;
  } catch (error: unknown) {
    throw toOffsetSyncError(error, { operation: 'topicIds', details: { nodeId } });
  }
}
