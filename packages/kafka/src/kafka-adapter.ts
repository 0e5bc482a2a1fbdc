// The facade of the package: the Kafka calls offsetsync needs that kafkajs' public API lacks or gets
// wrong, batched per broker. It wires the layers and owns the adapter's lifecycle; the work is done below:
// - protocol/: request and response shapes over kafkajs' encoders and decoders (the pinned kafkajs
//   internals and why they are used: protocol/kafkajs-internals.ts), record selection, error builders;
// - network/: client configuration, connections, metadata, leader routing, coordinator lanes, retries;
// - api/: one file per call (or close group of calls).
import type { Kafka as KafkaClient } from 'kafkajs';
import type { OffsetSyncError } from '@offsetsync/contracts';
import { commitOffsets } from './api/commit-offsets.js';
import { describeGroup } from './api/describe-group.js';
import { fetchCommittedOffsets } from './api/fetch-committed-offsets.js';
import { fetchRecords, type FetchOptions } from './api/fetch-records.js';
import { listOffsets, partitionBounds } from './api/list-offsets.js';
import { partitionCounts } from './api/partition-counts.js';
import type { CallContext } from './api/call-context.js';
import { closedError, ClusterConnection } from './network/cluster-connection.js';
import { CoordinatorLanes } from './network/coordinator-lanes.js';
import { createKafkaClients } from './network/kafka-clients.js';
import { LeaderRouter } from './network/leader-routing.js';
import { RequestEvents } from './network/request-events.js';
import { TopicMetadata } from './network/topic-metadata.js';
import type {
  CommitAnswer,
  CommitEntry,
  CommittedOffset,
  FetchAnswer,
  FetchRequest,
  GroupDescription,
  IsolationLevel,
  KafkaAdapterOptions,
  KafkaRequestEvent,
  OffsetAnswer,
  OffsetQuery,
  PartitionBounds,
  TopicPartition,
} from './types.js';

const DEFAULT_METADATA_MAX_AGE_MS = 30_000;

/**
 * The Kafka calls offsetsync needs, for one cluster: partition counts, raw ListOffsets (keeps -1), fetch at
 * an exact offset with transactional filtering, admin-style commits that never join a group, committed
 * offsets and group state. Requests for many partitions go out as one request per leader broker, in
 * parallel; a partition whose leader moved is looked up again and retried once.
 *
 * Partition-level failures come back as `error` on the answer; failures of the whole call (the cluster or
 * the group coordinator cannot be reached) reject with an {@link OffsetSyncError} (`KAFKA_UNREACHABLE`).
 * Methods connect on first use; after {@link disconnect} they reject with `LIFECYCLE`.
 */
export class KafkaAdapter {
  /** A kafkajs client for the same cluster (same TLS, SASL, timeouts, logging), for producers and consumers. */
  readonly kafka: KafkaClient;

  private readonly events: RequestEvents;
  private readonly connection: ClusterConnection;
  private readonly lanes: CoordinatorLanes;
  private readonly context: CallContext;
  private disconnecting: Promise<void> | undefined;

  constructor(options: KafkaAdapterOptions) {
    this.events = new RequestEvents(options.logger);
    const { kafka, clusters } = createKafkaClients(
      options,
      options.metadataMaxAgeMs ?? DEFAULT_METADATA_MAX_AGE_MS,
      (eventName, payload) => this.events.emit(eventName, payload),
    );
    this.kafka = kafka;
    const connections = clusters.map((cluster) => new ClusterConnection(cluster));
    this.connection = connections[0]!;
    this.lanes = new CoordinatorLanes(connections);
    const metadata = new TopicMetadata(
      this.connection,
      options.metadataMaxAgeMs ?? DEFAULT_METADATA_MAX_AGE_MS,
    );
    this.context = {
      ready: () => this.ready(),
      metadata,
      leaders: new LeaderRouter(this.connection, metadata),
      coordinators: this.lanes,
    };
  }

  /** Connects to the cluster and reads its brokers. Idempotent; a failed attempt may be repeated. */
  connect(): Promise<void> {
    if (this.disconnecting) return Promise.reject(closedError());
    return this.connection.connect();
  }

  /** Closes every broker connection. Idempotent: every caller gets the same promise. */
  disconnect(): Promise<void> {
    this.disconnecting ??= (async () => {
      await this.connection.settled();
      await Promise.all(this.lanes.lanes.map((lane) => lane.disconnect()));
    })();
    return this.disconnecting;
  }

  /**
   * Observes every request a broker answered for this adapter (not for clients built from
   * {@link kafka}). Returns the function that stops observing.
   */
  onRequest(listener: (event: KafkaRequestEvent) => void): () => void {
    return this.events.listen(listener);
  }

  /** Partition count of each topic that exists; topics missing on the cluster are absent. */
  partitionCounts(topics: readonly string[]): Promise<Map<string, number>> {
    return partitionCounts(this.context, topics);
  }

  /**
   * The log start offset and the high watermark (the log end) of each partition, in request order, or the
   * error that kept a partition from being read (for example a missing topic). One ListOffsets pair per
   * broker. Read uncommitted: the high watermark, not the last stable offset.
   */
  partitionBounds(partitions: readonly TopicPartition[]): Promise<Array<PartitionBounds | OffsetSyncError>> {
    return partitionBounds(this.context, partitions);
  }

  /**
   * ListOffsets as the broker answers it: for a timestamp, the first offset whose record timestamp is >=
   * it, or -1 when there is none yet (kafkajs' admin would report the high watermark instead). Answers
   * come in query order. Isolation (default read_committed) bounds 'latest' and timestamp lookups by the
   * last stable offset.
   */
  listOffsets(
    queries: readonly OffsetQuery[],
    options: { isolation?: IsolationLevel } = {},
  ): Promise<OffsetAnswer[]> {
    return listOffsets(this.context, queries, options);
  }

  /**
   * Reads records from exact offsets, one Fetch per leader broker (minBytes 1, a short wait: exact records
   * now, not a long poll). See {@link FetchAnswer} for what `records` holds. Answers come in request order.
   * Requests at nearby offsets of one partition share a read (see api/shared-reads.ts): the first round
   * reads each partition once from its lowest offset, a second round reads what the first did not reach
   * with reads as wide as the first ones turned out, and a last round gives each remaining offset its own
   * read.
   */
  fetchRecords(requests: readonly FetchRequest[], options: FetchOptions = {}): Promise<FetchAnswer[]> {
    return fetchRecords(this.context, requests, options);
  }

  /**
   * Commits offsets for a group the way Java's `AdminClient.alterConsumerGroupOffsets` does: one
   * OffsetCommit to the group coordinator with generation -1 and no member id, never joining the group.
   * A group with live members refuses: those answers carry `GROUP_ACTIVE` (not retryable) and the
   * committed offsets stay as they were. Answers come in entry order; when a partition is named twice,
   * the later entry is committed last.
   */
  commitOffsets(groupId: string, entries: readonly CommitEntry[]): Promise<CommitAnswer[]> {
    return commitOffsets(this.context, groupId, entries);
  }

  /** The offsets a group has committed (all topics, or only `topics`); partitions without one are left out. */
  fetchCommittedOffsets(groupId: string, topics?: readonly string[]): Promise<CommittedOffset[]> {
    return fetchCommittedOffsets(this.context, groupId, topics);
  }

  /**
   * State, protocol type and member count of a group, from DescribeGroups; an unknown group is `Dead`.
   *
   * Only groups of the classic protocol are visible this way: for a group of the KIP-848 consumer
   * protocol (`group.protocol=consumer`) Kafka 4.1 answers `Dead` even while it has members (seen against
   * the test bed). Do not decide that a group is free from this; commitOffsets is refused for live groups
   * of both protocols.
   */
  describeGroup(groupId: string): Promise<GroupDescription> {
    return describeGroup(this.context, groupId);
  }

  private async ready(): Promise<void> {
    if (this.disconnecting) throw closedError();
    await this.connect();
    // kafkajs may have added brokers while looking for one (findBroker refreshes on its own).
    this.connection.makeLenient();
  }
}
