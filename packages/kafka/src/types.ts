// The public types of @offsetsync/kafka: the options of the adapter and the questions and answers of its
// calls. Types only; nothing here does I/O.
import type { OffsetSyncError } from '@offsetsync/contracts';
import type { KafkaClusterConfig, Logger } from '@offsetsync/runtime';

/** Which records a read sees: only committed transactions (default) or everything written. */
export type IsolationLevel = 'read_committed' | 'read_uncommitted';

/** Options of {@link KafkaAdapter}. */
export interface KafkaAdapterOptions {
  /** How to reach the cluster (bootstrap servers, TLS, SASL, timeouts). */
  cluster: KafkaClusterConfig;
  /** Client id sent to the brokers; the service resolves `cluster.clientId ?? <its default>`. */
  clientId: string;
  /** Where kafkajs' warnings and errors go, and the adapter's own. */
  logger: Logger;
  /** How long partition leaders are cached before they are asked for again. Default: `30000`. */
  metadataMaxAgeMs?: number;
  /**
   * Connections to each broker over which group requests (OffsetFetch, OffsetCommit, DescribeGroups) are
   * spread, a group always on the same one. A broker handles one request of a connection at a time and an
   * OffsetCommit holds its connection until the coordinator wrote it, so one connection caps the group
   * requests a second. Default: `1`.
   */
  groupConnections?: number;
}

/** One topic partition. */
export interface TopicPartition {
  topic: string;
  partition: number;
}

/** Where a partition's log starts and ends right now. */
export interface PartitionBounds {
  logStartOffset: number;
  /** The offset the next appended record gets. */
  highWatermark: number;
}

/** One ListOffsets question: the first offset whose timestamp is >= `timestamp`, or the log start or end. */
export interface OffsetQuery extends TopicPartition {
  /** Milliseconds since the epoch, `'earliest'` (log start offset) or `'latest'` (log end offset). */
  timestamp: number | 'earliest' | 'latest';
}

/** The answer to one {@link OffsetQuery}. */
export interface OffsetAnswer extends TopicPartition {
  /** The offset; -1 when no record has a timestamp >= the one asked for (and when `error` is set). */
  offset: number;
  /** The timestamp of the record at `offset` for timestamp queries; -1 for earliest/latest and errors. */
  timestamp: number;
  /**
   * Set when this partition could not be answered; the other answers are still valid. `TOPIC_MISSING` or
   * `PARTITION_MISSING` (not retryable) when the cluster has no such topic or partition.
   */
  error?: OffsetSyncError;
}

/** One fetch: the records of a partition from an exact offset on. */
export interface FetchRequest extends TopicPartition {
  /** The first offset wanted. */
  offset: number;
  /** At most this many bytes for this partition (a larger first batch still comes whole). Default 1 MiB. */
  maxBytes?: number;
  /**
   * The leader epoch the caller takes for current (from {@link TopicIdentity}). The leader answers only
   * when it is its own epoch (FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH otherwise), so an answer proves
   * the partition has had the same leader since that epoch was read. Unset: not checked.
   */
  currentLeaderEpoch?: number;
}

/**
 * What identifies the history of a topic's partitions: its id (new when the topic is deleted and created
 * again) and each partition's leader epoch (higher after every leader change; only a leader change can
 * truncate records already written). A partition whose leader is unknown has no epoch here.
 */
export interface TopicIdentity {
  topicId: string;
  leaderEpochs: ReadonlyMap<number, number>;
}

/** One header value; Kafka allows a null value. */
export type HeaderValue = Buffer | null;

/** A data record as read from a partition. */
export interface FetchedRecord {
  offset: number;
  timestampMs: number;
  timestampType: 'create-time' | 'log-append-time';
  key: Buffer | null;
  value: Buffer | null;
  /** Headers by key; a key that occurs several times maps to the list of its values in order. */
  headers: Record<string, HeaderValue | HeaderValue[]>;
}

/** The answer to one {@link FetchRequest}. */
export interface FetchAnswer extends TopicPartition {
  requestedOffset: number;
  /**
   * Data records with offset >= `requestedOffset`, in offset order. Never control records; under
   * read_committed never records of aborted transactions. Offsets may have gaps (compaction, markers).
   */
  records: FetchedRecord[];
  /**
   * Where to continue reading: one past the last offset of the last whole batch returned (which may be a
   * control or aborted batch), or `requestedOffset` when no whole batch came back.
   */
  nextOffset: number;
  /** -1 when `error` is set. */
  highWatermark: number;
  /** -1 when `error` is set. */
  lastStableOffset: number;
  /** -1 when `error` is set. */
  logStartOffset: number;
  /**
   * The request's `currentLeaderEpoch`, set only when the leader checked it (Fetch v9 and later) and
   * answered: the partition's leader had that epoch when it read these records.
   */
  leaderEpoch?: number;
  /**
   * Set when this partition could not be read; the other answers are still valid. `TOPIC_MISSING` or
   * `PARTITION_MISSING` (not retryable) when the cluster has no such topic or partition.
   */
  error?: OffsetSyncError;
}

/** One offset to commit for a group. */
export interface CommitEntry extends TopicPartition {
  /** The next offset to consume. */
  offset: number;
  /** Commit metadata stored with the offset; offsetsync marks its commits here. */
  metadata: string | null;
}

/**
 * The outcome of one {@link CommitEntry}. A group with live members refuses admin commits:
 * `error.code === 'GROUP_ACTIVE'`, not retryable, with the broker's answer in `details.brokerError` and
 * `details.brokerCode`.
 */
export interface CommitAnswer extends TopicPartition {
  error?: OffsetSyncError;
}

/** An offset a group has committed. */
export interface CommittedOffset extends TopicPartition {
  offset: number;
  metadata: string | null;
}

/**
 * Which protocol a group's members speak: `classic` (JoinGroup/SyncGroup rebalances; what kafkajs and
 * Java consumers before `group.protocol=consumer` use) or `consumer` (KIP-848, the broker assigns).
 */
export type GroupType = 'classic' | 'consumer';

/** One live member of a group. */
export interface GroupMember {
  memberId: string;
  /** The static member id (`group.instance.id`); null for dynamic members and for classic groups. */
  instanceId: string | null;
  clientId: string;
  clientHost: string;
  /** The partitions the member owns now: consumer-protocol groups only (the broker knows them). */
  assignment?: TopicPartition[];
}

/** What {@link KafkaAdapter.describeGroup} reports. */
export interface GroupDescription {
  /**
   * The group's protocol, or `none` when no group of that id exists (state `Dead`). Always set by
   * describeGroup; optional only so that descriptions built by hand before the field existed still
   * type-check.
   */
  groupType?: GroupType | 'none';
  /**
   * The state as the group's coordinator names it. `Empty` (no members) and `Dead` (no such group) mean
   * the same for both group types. With members: `Stable`, `PreparingRebalance`, `CompletingRebalance`
   * (classic) or `Stable`, `Assigning`, `Reconciling` (consumer).
   */
  state: string;
  /** `consumer` for consumer groups of either type; empty for groups without members. */
  protocolType: string;
  /** The live members, counted the same way for both group types: non-zero means the group runs. */
  memberCount: number;
  /** The live members. Always set by describeGroup; optional for the same reason as `groupType`. */
  members?: GroupMember[];
}

/** Which groups {@link KafkaAdapter.listGroups} lists. */
export interface GroupFilter {
  /** Only groups of these types (`classic`, `consumer`, `share`, `streams`). Default: every type. */
  types?: readonly string[];
  /** Only groups in these states (`Empty`, `Stable`, ...; case-insensitive). Default: every state. */
  states?: readonly string[];
}

/** One group as ListGroups reports it. */
export interface GroupListing {
  groupId: string;
  /** `classic`, `consumer`, `share`, `streams`, as the broker names it. */
  groupType: string;
  /** The state as the broker names it (see {@link GroupDescription.state}). */
  state: string;
  protocolType: string;
}

/** One request answered by a broker, as kafkajs' instrumentation reports it. */
export interface KafkaRequestEvent {
  /** Kafka API name, for example `ListOffsets`. */
  apiName: string;
  apiVersion: number;
  /** `host:port` of the broker. */
  broker: string;
  durationMs: number;
  sizeBytes: number;
}
