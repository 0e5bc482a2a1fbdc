// The topic ids of named topics and their partitions' leader epochs, from one Metadata v10+ request
// (protocol/topic-identities.ts) to any broker.
import { toOffsetSyncError } from '../kafka-errors.js';
import { brokerError } from '../protocol/broker-errors.js';
import { TopicIdentitiesApi } from '../protocol/topic-identities.js';
import { sendFlexibleRequest } from '../network/send-request.js';
import type { TopicIdentity } from '../types.js';
import type { CallContext } from './call-context.js';

/** Kafka's UNKNOWN_TOPIC_OR_PARTITION: the topic does not exist (an answer, not a failure). */
const UNKNOWN_TOPIC_OR_PARTITION = 3;

/**
 * The identity of each topic that exists; a topic the cluster does not have is absent. Another error of a
 * topic rejects (an authorization failure must not read as "deleted"). A partition whose leader the
 * broker does not know (an error, or epoch -1) has no leader epoch.
 */
export async function topicIdentities(
  context: CallContext,
  topics: readonly string[],
): Promise<Map<string, TopicIdentity>> {
  await context.ready();
  const unique = [...new Set(topics)];
  const identities = new Map<string, TopicIdentity>();
  if (unique.length === 0) return identities;
  const nodeId = context.connection.nodeIds()[0];
  try {
    if (nodeId === undefined) throw new Error('the cluster has no broker to ask');
    const broker = await context.connection.findBroker(nodeId);
    const { response } = await sendFlexibleRequest(broker, TopicIdentitiesApi, { topics: unique });
    for (const answer of response.topics) {
      if (answer.errorCode === UNKNOWN_TOPIC_OR_PARTITION) continue;
      if (answer.errorCode !== 0)
        throw brokerError(answer.errorCode, 'topicIdentities', { topic: answer.name });
      if (answer.name === null) continue;
      const leaderEpochs = new Map<number, number>();
      for (const p of answer.partitions)
        if (p.errorCode === 0 && p.leaderEpoch >= 0) leaderEpochs.set(p.partition, p.leaderEpoch);
      identities.set(answer.name, { topicId: answer.topicId, leaderEpochs });
    }
    return identities;
  } catch (error: unknown) {
    throw toOffsetSyncError(error, { operation: 'topicIdentities', details: { nodeId } });
  }
}
