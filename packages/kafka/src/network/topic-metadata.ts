// Which broker leads each partition, read with one Metadata request for the topics asked about and cached
// for metadataMaxAgeMs; a topic is read again when its cache entry expired, lacks the partition, or was
// forgotten after a request found the leader moved.
import { ErrorCodes, type OffsetSyncError } from '@offsetsync/contracts';
import { BrokerErrorCodes } from '../kafka-errors.js';
import { brokerError, missingError } from '../protocol/broker-errors.js';
import type { MetadataResponse } from '../protocol/responses.js';
import { partitionKey } from '../protocol/topic-partitions.js';
import type { TopicPartition } from '../types.js';
import type { ClusterConnection } from './cluster-connection.js';
import { sendRequest } from './send-request.js';

/** Leader of each partition of a topic, as last read, or why the topic cannot be used. */
export type TopicState =
  | { kind: 'present'; leaders: Map<number, number>; expiresAt: number }
  | { kind: 'missing' }
  | { kind: 'failed'; error: OffsetSyncError };

/** The partition leaders of the topics asked about, cached. */
export class TopicMetadata {
  private readonly topics = new Map<string, TopicState>();

  constructor(
    private readonly connection: ClusterConnection,
    private readonly maxAgeMs: number,
  ) {}

  /** What was last read about `topic`, if it is cached. */
  cached(topic: string): TopicState | undefined {
    return this.topics.get(topic);
  }

  /** Forgets what was read about `topic`: the next lookup reads it again. */
  forget(topic: string): void {
    this.topics.delete(topic);
  }

  /** Metadata of `topics`, one Metadata request to any broker. Whole-call failures reject. */
  async read(topics: readonly string[]): Promise<Map<string, TopicState>> {
    const states = new Map<string, TopicState>();
    if (topics.length === 0) return states; // an empty list would ask for every topic
    const response = await this.connection.withAnyBroker('metadata', (broker) =>
      sendRequest(broker, 'Metadata', { topics: [...topics], allowAutoTopicCreation: false }),
    );
    const known = new Set(this.connection.nodeIds().map(Number));
    if (response.brokers.some((b) => !known.has(b.nodeId))) {
      // A broker kafkajs does not know yet: let it read the broker list so findBroker can reach it.
      await this.connection.refreshBrokers();
    }
    for (const [topic, state] of topicStates(response, Date.now() + this.maxAgeMs)) {
      states.set(topic, state);
      if (state.kind === 'present') this.topics.set(topic, state);
      else this.topics.delete(topic);
    }
    for (const topic of topics) if (!states.has(topic)) states.set(topic, { kind: 'missing' });
    return states;
  }

  /**
   * For each item: its leader's node id, or the error that makes the partition unusable (`TOPIC_MISSING`,
   * `PARTITION_MISSING`, a topic-level broker error). Reads the topics whose cache entry is stale, or
   * every topic asked about when `refresh`.
   */
  async leadersFor(
    items: readonly TopicPartition[],
    options: { refresh: boolean },
  ): Promise<Map<string, number | OffsetSyncError>> {
    const now = Date.now();
    const stale = new Set<string>();
    for (const item of items) {
      if (options.refresh || isStale(this.topics.get(item.topic), item.partition, now)) stale.add(item.topic);
    }
    const fresh = await this.read([...stale]);
    const routes = new Map<string, number | OffsetSyncError>();
    for (const item of items) {
      const state = fresh.get(item.topic) ?? this.topics.get(item.topic) ?? { kind: 'missing' };
      routes.set(partitionKey(item), leaderOf(item, state));
    }
    return routes;
  }
}

/** The state of every topic a Metadata response names, valid until `expiresAt`. */
function topicStates(response: MetadataResponse, expiresAt: number): Map<string, TopicState> {
  const states = new Map<string, TopicState>();
  for (const t of response.topicMetadata) {
    if (
      t.topicErrorCode === BrokerErrorCodes.UNKNOWN_TOPIC_OR_PARTITION ||
      t.topicErrorCode === BrokerErrorCodes.INVALID_TOPIC_EXCEPTION
    ) {
      states.set(t.topic, { kind: 'missing' });
    } else if (t.topicErrorCode !== 0 && t.topicErrorCode !== BrokerErrorCodes.LEADER_NOT_AVAILABLE) {
      states.set(t.topic, {
        kind: 'failed',
        error: brokerError(t.topicErrorCode, 'metadata', { topic: t.topic }),
      });
    } else {
      // A partition without a leader has leader -1; requests for it fail as LEADER_NOT_AVAILABLE.
      const leaders = new Map(t.partitionMetadata.map((p) => [p.partitionId, p.leader]));
      states.set(t.topic, { kind: 'present', leaders, expiresAt });
    }
  }
  return states;
}

/** Whether a cached topic state cannot route `partition` at `now`. */
function isStale(cached: TopicState | undefined, partition: number, now: number): boolean {
  return cached?.kind !== 'present' || cached.expiresAt <= now || !cached.leaders.has(partition);
}

/** The leader of the item's partition in `state`, or why there is none to ask. */
function leaderOf(item: TopicPartition, state: TopicState): number | OffsetSyncError {
  if (state.kind === 'missing') return missingError(item, ErrorCodes.TOPIC_MISSING);
  if (state.kind === 'failed') return state.error;
  return state.leaders.get(item.partition) ?? missingError(item, ErrorCodes.PARTITION_MISSING);
}
