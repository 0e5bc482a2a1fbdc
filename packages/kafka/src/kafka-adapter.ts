// The facade of the package: the Kafka calls offsetsync needs that kafkajs' public API lacks or gets
// wrong, batched per broker. It wires the layers and owns the adapter's lifecycle; the work is done below:
// - protocol/: request and response shapes over kafkajs' encoders and decoders (the pinned kafkajs
//   internals and why they are used: protocol/kafkajs-internals.ts), record selection, error builders;
// - network/: client configuration, connections, metadata, leader routing, coordinator lanes, retries;
// - api/: one file per call (or close group of calls).
import type { Kafka as KafkaClient } from 'kafkajs';
import { ErrorCodes, isOffsetSyncError, type OffsetSyncError } from '@offsetsync/contracts';
import { commitOffsets } from './api/commit-offsets.js';
import { describeGroup } from './api/describe-group.js';
import { fetchCommittedOffsets } from './api/fetch-committed-offsets.js';
import { fetchRecords, type FetchOptions } from './api/fetch-records.js';
import { listGroups } from './api/list-groups.js';
import { listOffsets, partitionBounds } from './api/list-offsets.js';
import { partitionCounts } from './api/partition-counts.js';
import { topicIdentities } from './api/topic-identities.js';
import type { CallContext } from './api/call-context.js';
import { ClusterConnection } from './network/cluster-connection.js';
import { CoordinatorLanes } from './network/coordinator-lanes.js';
import { createKafkaClients } from './network/kafka-clients.js';
import { LeaderRouter } from './network/leader-routing.js';
import { RequestEvents } from './network/request-events.js';
import { closedError, type SocketLedger } from './network/socket-ledger.js';
import { TopicMetadata } from './network/topic-metadata.js';
import type {
  CommitAnswer,
  CommitEntry,
  CommittedOffset,
  FetchAnswer,
  FetchRequest,
  GroupDescription,
  GroupFilter,
  GroupListing,
  IsolationLevel,
  KafkaAdapterOptions,
  KafkaRequestEvent,
  OffsetAnswer,
  OffsetQuery,
  PartitionBounds,
  TopicIdentity,
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
  private readonly sockets: SocketLedger;
  private readonly connection: ClusterConnection;
  private readonly lanes: CoordinatorLanes;
  private readonly context: CallContext;
  private disconnecting: Promise<void> | undefined;

  constructor(options: KafkaAdapterOptions) {
    this.events = new RequestEvents(options.logger);
    const { kafka, clusters, sockets } = createKafkaClients(
      options,
      options.metadataMaxAgeMs ?? DEFAULT_METADATA_MAX_AGE_MS,
      (eventName, payload) => this.events.emit(eventName, payload),
    );
    this.kafka = kafka;
    this.sockets = sockets;
    const connections = clusters.map((cluster) => new ClusterConnection(cluster, sockets));
    this.connection = connections[0]!;
    this.lanes = new CoordinatorLanes(connections);
    const metadata = new TopicMetadata(
      this.connection,
      options.metadataMaxAgeMs ?? DEFAULT_METADATA_MAX_AGE_MS,
    );
    this.context = {
      ready: () => this.ready(),
      connection: this.connection,
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

  /**
   * Closes every broker connection. Idempotent: every caller gets the same promise. From the call on, no
   * socket is opened and connects in flight are aborted; requests in flight may finish, and a call that
   * then needs a connection rejects with `LIFECYCLE`. Resolves once every socket the adapter opened is
   * closed (not those of clients built from {@link kafka}).
   */
  disconnect(): Promise<void> {
    this.disconnecting ??= (async () => {
      this.sockets.close();
      try {
        await Promise.all(this.lanes.lanes.map((lane) => lane.settled()));
        await Promise.all(this.lanes.lanes.map((lane) => lane.disconnect()));
      } finally {
        // kafkajs loses sockets in races; the ledger has them all.
        await this.sockets.destroyAll();
      }
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
    return this.guarded(() => partitionCounts(this.context, topics));
  }

  /**
   * The id of each topic that exists and its partitions' leader epochs (Metadata v10+, one request to any
   * broker); missing topics are absent. A topic deleted and created again under its name has a new id.
   */
  topicIdentities(topics: readonly string[]): Promise<Map<string, TopicIdentity>> {
    return this.guarded(() => topicIdentities(this.context, topics));
  }

  /**
   * The log start offset and the high watermark (the log end) of each partition, in request order, or the
   * error that kept a partition from being read (for example a missing topic). One ListOffsets pair per
   * broker. Read uncommitted: the high watermark, not the last stable offset.
   */
  partitionBounds(partitions: readonly TopicPartition[]): Promise<Array<PartitionBounds | OffsetSyncError>> {
    return this.guarded(() => partitionBounds(this.context, partitions));
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
    return this.guarded(() => listOffsets(this.context, queries, options));
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
    return this.guarded(() => fetchRecords(this.context, requests, options));
  }

  /**
   * Commits offsets for a group the way Java's `AdminClient.alterConsumerGroupOffsets` does: one
   * OffsetCommit to the group coordinator with generation -1 and no member id, never joining the group.
   * A group with live members refuses: those answers carry `GROUP_ACTIVE` (not retryable) and the
   * committed offsets stay as they were. Answers come in entry order; when a partition is named twice,
   * the later entry is committed last.
   */
  commitOffsets(groupId: string, entries: readonly CommitEntry[]): Promise<CommitAnswer[]> {
    return this.guarded(() => commitOffsets(this.context, groupId, entries));
  }

  /** The offsets a group has committed (all topics, or only `topics`); partitions without one are left out. */
  fetchCommittedOffsets(groupId: string, topics?: readonly string[]): Promise<CommittedOffset[]> {
    return this.guarded(() => fetchCommittedOffsets(this.context, groupId, topics));
  }

  /**
   * Type, state and live members of a group, asked the way its type needs: ConsumerGroupDescribe for a
   * group of the KIP-848 consumer protocol (`group.protocol=consumer`), which DescribeGroups reports as
   * Dead, and DescribeGroups for a classic group. `memberCount` counts live members the same way for
   * both, so "no members" is right for both. An unknown group is `Dead` (type `none`); a group of a
   * type whose members cannot be read (share, streams) rejects with `GROUP_TYPE_UNSUPPORTED`.
   */
  describeGroup(groupId: string): Promise<GroupDescription> {
    return this.guarded(() => describeGroup(this.context, groupId));
  }

  /**
   * The groups of the cluster (ListGroups to every broker), optionally only those of the given types or
   * states, sorted by group id. Rejects with `KAFKA_UNSUPPORTED` when a broker cannot apply the filter
   * (types need ListGroups v5, Kafka 3.8+; states v4).
   */
  listGroups(filter: GroupFilter = {}): Promise<GroupListing[]> {
    return this.guarded(() => listGroups(this.context, filter));
  }

  /**
   * Runs a call; once the adapter began to disconnect, what the call could not do for want of a
   * connection rejects with `LIFECYCLE`: its failure, or answers that carry a refused connection's error.
   */
  private async guarded<T>(call: () => Promise<T>): Promise<T> {
    if (this.sockets.closed) throw closedError();
    const refusals = this.sockets.refusals;
    let result: T;
    try {
      result = await call();
    } catch (error: unknown) {
      if (!this.sockets.closed || (isOffsetSyncError(error) && error.code === ErrorCodes.LIFECYCLE))
        throw error;
      throw closedError(error);
    }
    if (this.sockets.refusals !== refusals) throw closedError();
    return result;
  }

  private async ready(): Promise<void> {
    if (this.sockets.closed) throw closedError();
    await this.connect();
    // kafkajs may have added brokers while looking for one (findBroker refreshes on its own).
    this.connection.makeLenient();
  }
}
