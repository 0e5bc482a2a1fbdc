// The Kafka calls offsetsync needs that kafkajs' public API lacks or gets wrong, batched per broker.
//
// Why kafkajs internals are used here, and only here:
// - `admin.fetchTopicOffsetsByTimestamp` replaces the broker's -1 ("no record with timestamp >= T") by the
//   high watermark, which would make the translator skip records that have not been replicated yet.
// - kafkajs has no public raw fetch at an exact offset, no admin-style OffsetCommit (generation -1, no
//   member id) with metadata, and no per-partition outcome: its response parsers throw the first
//   partition's error code and drop every other partition's answer.
// So the adapter takes kafkajs' `Cluster` (broker discovery, connections, SASL, TLS) through the private
// factory the `Kafka` instance keeps under Symbol('private:Kafka:createCluster'), and sends kafkajs' own
// request encoders and response decoders through a broker's connection pool with a parser that keeps
// per-partition error codes. The same lenient Metadata call replaces the pooled brokers' own, so that one
// leaderless partition somewhere in the cluster cannot stop kafkajs from learning the broker list
// (makeBrokerMetadataLenient). `kafkajsInternals()` checks every piece it relies on when first used and
// fails with a clear message; kafka-adapter.test.ts fails when a kafkajs upgrade changes any of it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ConnectionOptions } from 'node:tls';
import kafkajs, { type Kafka as KafkaClient, type KafkaConfig, type SASLOptions } from 'kafkajs';
import type { KafkaClusterConfig } from '@offsetsync/runtime';
import { ConfigError, ErrorCodes, OffsetSyncError, type ConfigProblem } from '@offsetsync/contracts';
import type { Logger } from '@offsetsync/runtime';
import { registerCompressionCodecs } from './compression-codecs.js';
import { BrokerErrorCodes, toOffsetSyncError } from './kafka-errors.js';
import { readShared } from './shared-reads.js';

const { Kafka, logLevel } = kafkajs;

// --- public types -------------------------------------------------------------------------------------

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

/** What {@link KafkaAdapter.describeGroup} reports. */
export interface GroupDescription {
  /** `Empty`, `Stable`, `PreparingRebalance`, `CompletingRebalance` or `Dead` (also for unknown groups). */
  state: string;
  /** `consumer` for consumer groups; empty for groups without members. */
  protocolType: string;
  memberCount: number;
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

// --- kafkajs internals --------------------------------------------------------------------------------

const CREATE_CLUSTER_SYMBOL = 'private:Kafka:createCluster';

type ApiName = 'Metadata' | 'ListOffsets' | 'Fetch' | 'OffsetCommit' | 'OffsetFetch' | 'DescribeGroups';
const API_NAMES: readonly ApiName[] = [
  'Metadata',
  'ListOffsets',
  'Fetch',
  'OffsetCommit',
  'OffsetFetch',
  'DescribeGroups',
];

interface ProtocolResponse {
  decode(raw: Buffer): Promise<unknown>;
  parse(decoded: unknown): Promise<unknown>;
}
interface ProtocolRequest {
  request: { apiKey: number; apiName: string; apiVersion: number };
  response: ProtocolResponse;
  requestTimeout?: number;
}
/** kafkajs `Broker` (src/broker/index.js): the parts used. */
export interface InternalBroker {
  connectionPool: { host: string; port: number; send(request: ProtocolRequest): Promise<unknown> };
  lookupRequest(apiKey: number, definition: unknown): (args: Record<string, unknown>) => ProtocolRequest;
  metadata: (topics: string[]) => Promise<unknown>;
  disconnect(): Promise<void>;
}
/** kafkajs `BrokerPool` (src/cluster/brokerPool.js): the brokers it keeps. */
export interface InternalBrokerPool {
  seedBroker?: InternalBroker;
  brokers: Record<string, InternalBroker>;
}
/** kafkajs `Cluster` (src/cluster/index.js): the parts used. */
interface InternalCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  refreshMetadata(): Promise<void>;
  getNodeIds(): string[];
  findBroker(query: { nodeId: number | string }): Promise<InternalBroker>;
  findGroupCoordinator(query: { groupId: string }): Promise<InternalBroker>;
  brokerPool: InternalBrokerPool;
}
interface ClusterOptions {
  allowAutoTopicCreation: boolean;
  metadataMaxAge: number;
  maxInFlightRequests: null;
  instrumentationEmitter: { emit(eventName: string, payload: unknown): void };
}

/** The pieces of kafkajs the adapter relies on, each checked when loaded. */
export interface KafkajsInternals {
  /** kafkajs' version, for the contract test. */
  version: string;
  /** Builds a private `Cluster` from a `Kafka` instance. */
  createCluster(kafka: KafkaClient, options: ClusterOptions): InternalCluster;
  /** API key and request definition (versions + encoders/decoders) per API. */
  apis: Record<ApiName, { apiKey: number; definition: unknown }>;
  /** kafkajs' error for a protocol error code (type name, retriable flag). */
  createErrorFromCode(code: number): Error;
}

let internals: KafkajsInternals | undefined;

function internalsChanged(what: string): OffsetSyncError {
  return new OffsetSyncError(
    `kafkajs internals changed (${what}); the Kafka adapter must be updated for this kafkajs version`,
    { code: ErrorCodes.INTERNAL },
  );
}

/** Loads and checks the kafkajs internals the adapter uses. Throws INTERNAL when any has changed. */
export function kafkajsInternals(): KafkajsInternals {
  if (internals) return internals;
  const require = createRequire(import.meta.url);
  const pkg = require('kafkajs/package.json') as { version?: unknown };
  const requestsModule = require('kafkajs/src/protocol/requests/index.js') as {
    requests?: Record<string, { versions?: unknown; protocol?: unknown }>;
  };
  const apiKeys = require('kafkajs/src/protocol/requests/apiKeys.js') as Record<string, unknown>;
  const errorModule = require('kafkajs/src/protocol/error.js') as { createErrorFromCode?: unknown };

  const apis = {} as Record<ApiName, { apiKey: number; definition: unknown }>;
  for (const name of API_NAMES) {
    const definition = requestsModule.requests?.[name];
    const apiKey = apiKeys[name];
    if (typeof apiKey !== 'number' || !Array.isArray(definition?.versions)) {
      throw internalsChanged(`request definition ${name}`);
    }
    apis[name] = { apiKey, definition };
  }
  if (typeof errorModule.createErrorFromCode !== 'function') throw internalsChanged('createErrorFromCode');
  const createErrorFromCode = errorModule.createErrorFromCode as (code: number) => Error;

  internals = {
    version: typeof pkg.version === 'string' ? pkg.version : 'unknown',
    apis,
    createErrorFromCode: (code) => createErrorFromCode(code),
    createCluster(kafka, options) {
      const symbol = Object.getOwnPropertySymbols(kafka).find((s) => s.description === CREATE_CLUSTER_SYMBOL);
      const factory: unknown = symbol === undefined ? undefined : Reflect.get(kafka, symbol);
      if (typeof factory !== 'function') throw internalsChanged(`Symbol(${CREATE_CLUSTER_SYMBOL})`);
      const cluster = (factory as (o: ClusterOptions) => unknown)(options) as Record<string, unknown>;
      for (const method of [
        'connect',
        'disconnect',
        'refreshMetadata',
        'getNodeIds',
        'findBroker',
        'findGroupCoordinator',
      ]) {
        if (typeof cluster[method] !== 'function') throw internalsChanged(`Cluster.${method}`);
      }
      const pool = cluster.brokerPool as Partial<InternalBrokerPool> | undefined;
      if (typeof pool?.brokers !== 'object') throw internalsChanged('Cluster.brokerPool.brokers');
      return cluster as unknown as InternalCluster;
    },
  };
  return internals;
}

function checkBroker(broker: InternalBroker): InternalBroker {
  if (typeof broker.lookupRequest !== 'function' || typeof broker.connectionPool?.send !== 'function') {
    throw internalsChanged('Broker.lookupRequest / Broker.connectionPool.send');
  }
  return broker;
}

const lenientBrokers = new WeakSet<InternalBroker>();

/**
 * kafkajs learns the cluster's brokers from a Metadata request for every topic and throws when any
 * partition anywhere reports an error (a partition without a leader while a broker is down), which would
 * keep the adapter from connecting to a cluster that is mostly healthy. The brokers of the adapter's own
 * pool therefore send Metadata without kafkajs' strict parser; the adapter reads topic errors itself.
 * Brokers the pool creates later are covered by the next call.
 */
export function makeBrokerMetadataLenient(pool: InternalBrokerPool): void {
  for (const broker of [pool.seedBroker, ...Object.values(pool.brokers)]) {
    if (broker === undefined || lenientBrokers.has(broker)) continue;
    broker.metadata = (topics) => sendRequest(broker, 'Metadata', { topics, allowAutoTopicCreation: false });
    lenientBrokers.add(broker);
  }
}

/** Raised by the adapter's decoder wrapper: the response arrived but could not be decoded. */
class ResponseDecodeError extends Error {}

/**
 * Sends one request with kafkajs' encoder and decoder for the best version both sides support, but
 * without kafkajs' parser, so every partition's error code reaches the caller.
 */
async function sendRequest(
  broker: InternalBroker,
  api: ApiName,
  args: Record<string, unknown>,
): Promise<unknown> {
  const { apiKey, definition } = kafkajsInternals().apis[api];
  const built = checkBroker(broker).lookupRequest(apiKey, definition)(args);
  const response: ProtocolResponse = {
    decode: async (raw) => {
      try {
        return await built.response.decode(raw);
      } catch (cause: unknown) {
        throw new ResponseDecodeError(`cannot decode ${api} response`, { cause });
      }
    },
    parse: (decoded) => Promise.resolve(decoded),
  };
  try {
    return await broker.connectionPool.send({
      request: built.request,
      response,
      ...(built.requestTimeout === undefined ? {} : { requestTimeout: built.requestTimeout }),
    });
  } catch (error: unknown) {
    // What kafkajs' Broker does for its own requests: a closed connection is dropped so the next use
    // reconnects.
    if (error instanceof Error && error.name === 'KafkaJSConnectionClosedError') await broker.disconnect();
    throw error;
  }
}

// Decoded response shapes (kafkajs' decoders, the versions kafkajs 2.2.4 negotiates with Kafka 2.x-4.x).
interface MetadataResponse {
  brokers: { nodeId: number }[];
  topicMetadata: {
    topicErrorCode: number;
    topic: string;
    partitionMetadata: { partitionErrorCode: number; partitionId: number; leader: number }[];
  }[];
}
interface ListOffsetsResponse {
  responses: {
    topic: string;
    partitions: {
      partition: number;
      errorCode: number;
      timestamp?: string;
      offset?: string;
      offsets?: string[];
    }[];
  }[];
}
/** A record as kafkajs decodes it (src/protocol/recordBatch/record/v0/decoder.js). */
export interface DecodedRecord {
  offset: string;
  timestamp: string;
  key: Buffer | null;
  value: Buffer | null;
  headers?: Record<string, HeaderValue | HeaderValue[]>;
  isControlRecord?: boolean;
  /** Legacy message sets only: their attributes carry the timestamp type. */
  attributes?: number;
  /** Absent for legacy message sets (magic 0 and 1). */
  batchContext?: {
    firstOffset: string;
    lastOffsetDelta: number;
    producerId: string;
    inTransaction: boolean;
    isControlBatch: boolean;
    timestampType: number;
  };
}
interface FetchResponse {
  errorCode?: number;
  responses: {
    topicName: string;
    partitions: {
      partition: number;
      errorCode: number;
      highWatermark: string;
      lastStableOffset?: string;
      /** kafkajs 2.2.4 decodes log_start_offset under this misspelt name. */
      lastStartOffset?: string;
      logStartOffset?: string;
      abortedTransactions?: { producerId: string; firstOffset: string }[];
      messages: DecodedRecord[];
    }[];
  }[];
}
interface OffsetCommitResponse {
  responses: { topic: string; partitions: { partition: number; errorCode: number }[] }[];
}
interface OffsetFetchResponse {
  errorCode?: number;
  responses: {
    topic: string;
    partitions: { partition: number; offset: string; metadata: string | null; errorCode: number }[];
  }[];
}
interface DescribeGroupsResponse {
  groups: { errorCode: number; groupId: string; state: string; protocolType: string; members: unknown[] }[];
}

// --- pure helpers (exported for unit tests) -------------------------------------------------------------

const CONTROL_TYPE_ABORT = 0;

/**
 * Turns the records of one partition's fetch response into what a consumer would see: records before
 * `requestedOffset` (a fetch returns whole batches) and control records are dropped; under read_committed
 * so are the batches of aborted transactions. The standard algorithm (as in the Java consumer): the
 * response lists aborted transactions as (producer id, first offset); a transactional batch of a producer
 * whose aborted transaction started at or before the batch's last offset is aborted, until that
 * producer's ABORT marker.
 */
export function selectRecords(
  messages: readonly DecodedRecord[],
  options: {
    requestedOffset: number;
    isolation: IsolationLevel;
    abortedTransactions: readonly { producerId: string; firstOffset: string }[];
  },
): { records: FetchedRecord[]; nextOffset: number } {
  const readCommitted = options.isolation === 'read_committed';
  const aborted = options.abortedTransactions
    .map((a) => ({ producerId: a.producerId, firstOffset: Number(a.firstOffset) }))
    .sort((a, b) => a.firstOffset - b.firstOffset);
  let nextAborted = 0;
  const abortedProducers = new Set<string>();
  const records: FetchedRecord[] = [];
  let nextOffset = options.requestedOffset;

  for (const batch of batchesOf(messages)) {
    const first = batch[0];
    const last = batch[batch.length - 1];
    if (first === undefined || last === undefined) continue;
    const context = first.batchContext;
    const lastOffset =
      context === undefined ? Number(last.offset) : Number(context.firstOffset) + context.lastOffsetDelta;
    nextOffset = Math.max(nextOffset, lastOffset + 1);

    if (readCommitted && context !== undefined && context.producerId !== '-1') {
      while (nextAborted < aborted.length && (aborted[nextAborted]?.firstOffset ?? Infinity) <= lastOffset) {
        abortedProducers.add(aborted[nextAborted]?.producerId ?? '');
        nextAborted += 1;
      }
      if (context.isControlBatch) {
        if (isAbortMarker(first)) abortedProducers.delete(context.producerId);
        continue;
      }
      if (context.inTransaction && abortedProducers.has(context.producerId)) continue;
    }
    if (context?.isControlBatch === true) continue;

    for (const message of batch) {
      const offset = Number(message.offset);
      if (offset < options.requestedOffset || message.isControlRecord === true) continue;
      records.push(toFetchedRecord(message, offset));
    }
  }
  return { records, nextOffset };
}

/** Consecutive records of the same batch (kafkajs flattens batches but keeps each one's context). */
function* batchesOf(messages: readonly DecodedRecord[]): Generator<DecodedRecord[]> {
  let current: DecodedRecord[] = [];
  for (const message of messages) {
    const previous = current[current.length - 1];
    const sameBatch =
      previous !== undefined &&
      message.batchContext !== undefined &&
      previous.batchContext?.firstOffset === message.batchContext.firstOffset;
    if (!sameBatch && current.length > 0) {
      yield current;
      current = [];
    }
    current.push(message);
  }
  if (current.length > 0) yield current;
}

/** A control record's key is int16 version + int16 type (0 = ABORT, 1 = COMMIT). */
function isAbortMarker(record: DecodedRecord): boolean {
  const key = record.key;
  return key !== null && key.length >= 4 && key.readInt16BE(2) === CONTROL_TYPE_ABORT;
}

const LOG_APPEND_TIME = 1;
const LEGACY_LOG_APPEND_TIME_FLAG = 0x08;

function toFetchedRecord(message: DecodedRecord, offset: number): FetchedRecord {
  const logAppendTime =
    message.batchContext === undefined
      ? ((message.attributes ?? 0) & LEGACY_LOG_APPEND_TIME_FLAG) !== 0
      : message.batchContext.timestampType === LOG_APPEND_TIME;
  const headers: Record<string, HeaderValue | HeaderValue[]> = {};
  for (const [key, value] of Object.entries(message.headers ?? {})) headers[key] = value;
  return {
    offset,
    timestampMs: Number(message.timestamp),
    timestampType: logAppendTime ? 'log-append-time' : 'create-time',
    key: message.key,
    value: message.value,
    headers,
  };
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

function partitionKey(tp: TopicPartition): string {
  return `${tp.partition}:${tp.topic}`;
}

function groupByTopic<T extends TopicPartition>(items: readonly T[]): Map<string, T[]> {
  const byTopic = new Map<string, T[]>();
  for (const item of items) {
    const list = byTopic.get(item.topic);
    if (list) list.push(item);
    else byTopic.set(item.topic, [item]);
  }
  return byTopic;
}

function isOffset(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 0;
}

// --- client configuration -----------------------------------------------------------------------------

/** Builds kafkajs' client options from the cluster configuration (reads the TLS files). */
export function kafkajsClientConfig(
  cluster: KafkaClusterConfig,
  clientId: string,
  logger: Logger,
): KafkaConfig {
  const config: KafkaConfig = {
    clientId,
    brokers: [...cluster.bootstrapServers],
    connectionTimeout: cluster.connectionTimeoutMs,
    requestTimeout: cluster.requestTimeoutMs,
    logLevel: logLevel.WARN,
    logCreator: () => (entry) => {
      const {
        message,
        timestamp: _timestamp,
        logger: _logger,
        ...extra
      } = entry.log as {
        message: string;
        timestamp?: string;
        logger?: string;
        [key: string]: unknown;
      };
      const record = { component: 'kafkajs', namespace: entry.namespace, ...extra };
      if (entry.level === logLevel.ERROR) logger.error(record, message);
      else logger.warn(record, message);
    },
  };
  const ssl = sslOptions(cluster.tls);
  if (ssl !== undefined) config.ssl = ssl;
  if (cluster.sasl !== undefined) config.sasl = saslOptions(cluster.sasl);
  return config;
}

function sslOptions(tls: KafkaClusterConfig['tls']): ConnectionOptions | undefined {
  if (tls?.enabled !== true) return undefined;
  const problems: ConfigProblem[] = [];
  const read = (field: 'caFile' | 'certFile' | 'keyFile'): Buffer | undefined => {
    const path = tls[field];
    if (path === undefined) return undefined;
    try {
      return readFileSync(path);
    } catch (e: unknown) {
      const reason = e instanceof Error ? e.message : String(e);
      problems.push({ path: `tls.${field}`, message: `cannot read ${path}: ${reason}` });
      return undefined;
    }
  };
  const ca = read('caFile');
  const cert = read('certFile');
  const key = read('keyFile');
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    rejectUnauthorized: tls.rejectUnauthorized,
    ...(ca === undefined ? {} : { ca: [ca] }),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key }),
  };
}

function saslOptions(sasl: NonNullable<KafkaClusterConfig['sasl']>): SASLOptions {
  const { username, password } = sasl;
  switch (sasl.mechanism) {
    case 'plain':
      return { mechanism: 'plain', username, password };
    case 'scram-sha-256':
      return { mechanism: 'scram-sha-256', username, password };
    case 'scram-sha-512':
      return { mechanism: 'scram-sha-512', username, password };
  }
}

// --- the adapter --------------------------------------------------------------------------------------

/** Leader of each partition of a topic, as last read, or why the topic cannot be used. */
type TopicState =
  | { kind: 'present'; leaders: Map<number, number>; expiresAt: number }
  | { kind: 'missing' }
  | { kind: 'failed'; error: OffsetSyncError };

/** Error codes after which the partition's leader is looked up again and the request retried once. */
const LEADER_MOVED_CODES: ReadonlySet<number> = new Set([
  BrokerErrorCodes.UNKNOWN_TOPIC_OR_PARTITION,
  BrokerErrorCodes.LEADER_NOT_AVAILABLE,
  BrokerErrorCodes.NOT_LEADER_OR_FOLLOWER,
  BrokerErrorCodes.FENCED_LEADER_EPOCH,
  BrokerErrorCodes.UNKNOWN_LEADER_EPOCH,
]);

/** Error codes after which the group coordinator is looked up again and the request retried once. */
const COORDINATOR_MOVED_CODES: ReadonlySet<number> = new Set([
  BrokerErrorCodes.COORDINATOR_LOAD_IN_PROGRESS,
  BrokerErrorCodes.COORDINATOR_NOT_AVAILABLE,
  BrokerErrorCodes.NOT_COORDINATOR,
]);

/**
 * What the broker answers an admin-style commit (generation -1, no member id) for a group with live
 * members. Kafka 4.1 answers UNKNOWN_MEMBER_ID (25) for every partition, both for a stable classic group
 * (test/integration/kafka-adapter.test.ts, a kafkajs consumer) and for a KIP-848 consumer-protocol group
 * (checked with the Java console consumer). REBALANCE_IN_PROGRESS (27, while a classic group completes a
 * rebalance) and ILLEGAL_GENERATION (22) likewise only occur when the group has members.
 */
const GROUP_ACTIVE_CODES: ReadonlySet<number> = new Set([
  BrokerErrorCodes.UNKNOWN_MEMBER_ID,
  BrokerErrorCodes.REBALANCE_IN_PROGRESS,
  BrokerErrorCodes.ILLEGAL_GENERATION,
]);

/** Outcome of one item of a per-leader request: an answer, the broker's error code, or a failure. */
type ItemOutcome<A> = { ok: A } | { code: number } | { error: OffsetSyncError };

/** Whether the partition is worth another attempt after its leader was looked up again. */
function leaderMoved(outcome: { code: number } | { error: OffsetSyncError }): boolean {
  return 'code' in outcome
    ? LEADER_MOVED_CODES.has(outcome.code)
    : outcome.error.code === ErrorCodes.KAFKA_UNREACHABLE;
}

function noAnswer(operation: string, item: TopicPartition): { error: OffsetSyncError } {
  return {
    error: new OffsetSyncError(
      `${operation}: the broker did not answer for ${item.topic}-${item.partition}`,
      {
        code: ErrorCodes.KAFKA_PROTOCOL,
        details: { topic: item.topic, partition: item.partition },
      },
    ),
  };
}

const DEFAULT_PARTITION_FETCH_BYTES = 1024 * 1024;
const MAX_FETCH_RESPONSE_BYTES = 50 * 1024 * 1024;
const DEFAULT_FETCH_MAX_WAIT_MS = 10;
const ISOLATION_CODES: Record<IsolationLevel, number> = { read_uncommitted: 0, read_committed: 1 };
const EARLIEST_TIMESTAMP = -2;
const LATEST_TIMESTAMP = -1;

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

  private readonly logger: Logger;
  private readonly cluster: InternalCluster;
  /** Clusters whose connections carry group requests; the first is `cluster`, the others connect on first use. */
  private readonly groupLanes: { cluster: InternalCluster; connecting?: Promise<void> }[];
  /** Node id of each group's coordinator, as last found; forgotten when the coordinator moved or failed. */
  private readonly coordinators = new Map<string, string>();
  private readonly metadataMaxAgeMs: number;
  private readonly topics = new Map<string, TopicState>();
  private readonly requestListeners = new Set<(event: KafkaRequestEvent) => void>();
  private connecting: Promise<void> | undefined;
  private disconnecting: Promise<void> | undefined;

  constructor(options: KafkaAdapterOptions) {
    registerCompressionCodecs();
    this.logger = options.logger;
    this.metadataMaxAgeMs = options.metadataMaxAgeMs ?? 30_000;
    const config = kafkajsClientConfig(options.cluster, options.clientId, options.logger);
    this.kafka = new Kafka(config);
    // The adapter's own client retries little: it retries leader moves itself, and callers want a
    // prompt KAFKA_UNREACHABLE rather than kafkajs' default of about half a minute of retries.
    const ownClient = new Kafka({
      ...config,
      retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 1_000 },
    });
    const clusterOptions: ClusterOptions = {
      allowAutoTopicCreation: false,
      metadataMaxAge: this.metadataMaxAgeMs,
      maxInFlightRequests: null,
      instrumentationEmitter: { emit: (eventName, payload) => this.emitRequest(eventName, payload) },
    };
    this.cluster = kafkajsInternals().createCluster(ownClient, clusterOptions);
    const lanes = options.groupConnections ?? 1;
    if (!Number.isSafeInteger(lanes) || lanes < 1) {
      throw new OffsetSyncError(`groupConnections must be a positive integer, not ${lanes}`, {
        code: ErrorCodes.INTERNAL,
      });
    }
    this.groupLanes = [{ cluster: this.cluster }];
    for (let i = 1; i < lanes; i++) {
      this.groupLanes.push({ cluster: kafkajsInternals().createCluster(ownClient, clusterOptions) });
    }
  }

  /** Connects to the cluster and reads its brokers. Idempotent; a failed attempt may be repeated. */
  connect(): Promise<void> {
    if (this.disconnecting) return Promise.reject(closedError());
    this.connecting ??= (async () => {
      try {
        await this.cluster.connect();
        await this.refreshBrokers();
      } catch (error: unknown) {
        this.connecting = undefined;
        throw toOffsetSyncError(error, { operation: 'connect' });
      }
    })();
    return this.connecting;
  }

  /** Closes every broker connection. Idempotent: every caller gets the same promise. */
  disconnect(): Promise<void> {
    this.disconnecting ??= (async () => {
      try {
        await this.connecting;
      } catch {
        // A connect that failed left nothing open beyond what cluster.disconnect() closes.
      }
      await Promise.all(this.groupLanes.map((lane) => lane.cluster.disconnect()));
    })();
    return this.disconnecting;
  }

  /**
   * Observes every request a broker answered for this adapter (not for clients built from
   * {@link kafka}). Returns the function that stops observing.
   */
  onRequest(listener: (event: KafkaRequestEvent) => void): () => void {
    this.requestListeners.add(listener);
    return () => this.requestListeners.delete(listener);
  }

  /** Partition count of each topic that exists; topics missing on the cluster are absent. */
  async partitionCounts(topics: readonly string[]): Promise<Map<string, number>> {
    await this.ready();
    const unique = [...new Set(topics)];
    const states = await this.readTopics(unique);
    const counts = new Map<string, number>();
    for (const topic of unique) {
      const state = states.get(topic);
      if (state?.kind === 'present') counts.set(topic, state.leaders.size);
      else if (state?.kind === 'failed') throw state.error;
    }
    return counts;
  }

  /**
   * The log start offset and the high watermark (the log end) of each partition, in request order, or the
   * error that kept a partition from being read (for example a missing topic). One ListOffsets pair per
   * broker. Read uncommitted: the high watermark, not the last stable offset.
   */
  async partitionBounds(
    partitions: readonly TopicPartition[],
  ): Promise<Array<PartitionBounds | OffsetSyncError>> {
    const answers = await this.listOffsets(
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

  /**
   * ListOffsets as the broker answers it: for a timestamp, the first offset whose record timestamp is >=
   * it, or -1 when there is none yet (kafkajs' admin would report the high watermark instead). Answers
   * come in query order. Isolation (default read_committed) bounds 'latest' and timestamp lookups by the
   * last stable offset.
   */
  async listOffsets(
    queries: readonly OffsetQuery[],
    options: { isolation?: IsolationLevel } = {},
  ): Promise<OffsetAnswer[]> {
    await this.ready();
    const isolationLevel = ISOLATION_CODES[options.isolation ?? 'read_committed'];
    const failed = (q: OffsetQuery, error: OffsetSyncError): OffsetAnswer => ({
      topic: q.topic,
      partition: q.partition,
      offset: -1,
      timestamp: -1,
      error,
    });
    return this.perLeader('listOffsets', queries, failed, async (broker, batch) => {
      const topics = [...groupByTopic(batch)].map(([topic, items]) => ({
        topic,
        partitions: items.map((q) => ({ partition: q.partition, timestamp: timestampCode(q.timestamp) })),
      }));
      const response = (await sendRequest(broker, 'ListOffsets', {
        replicaId: -1,
        isolationLevel,
        topics,
      })) as ListOffsetsResponse;
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
    });
  }

  /**
   * Reads records from exact offsets, one Fetch per leader broker (minBytes 1, a short wait: exact records
   * now, not a long poll). See {@link FetchAnswer} for what `records` holds. Answers come in request order.
   * Requests at nearby offsets of one partition share a read (see shared-reads.ts): the first round reads
   * each partition once from its lowest offset, a second round reads what the first did not reach with
   * reads as wide as the first ones turned out, and a last round gives each remaining offset its own read.
   */
  async fetchRecords(
    requests: readonly FetchRequest[],
    options: { isolation?: IsolationLevel; maxWaitMs?: number } = {},
  ): Promise<FetchAnswer[]> {
    return readShared(requests, (reads) => this.fetchEach(reads, options));
  }

  /** One round of reads: requests at the same partition are separate Fetches. */
  private async fetchEach(
    requests: readonly FetchRequest[],
    options: { isolation?: IsolationLevel; maxWaitMs?: number },
  ): Promise<FetchAnswer[]> {
    await this.ready();
    const isolation = options.isolation ?? 'read_committed';
    const maxWaitTime = options.maxWaitMs ?? DEFAULT_FETCH_MAX_WAIT_MS;
    const failed = (r: FetchRequest, error: OffsetSyncError): FetchAnswer => ({
      topic: r.topic,
      partition: r.partition,
      requestedOffset: r.offset,
      records: [],
      nextOffset: r.offset,
      highWatermark: -1,
      lastStableOffset: -1,
      logStartOffset: -1,
      error,
    });
    return this.perLeader('fetchRecords', requests, failed, async (broker, batch) => {
      const byKey = new Map(batch.map((r) => [partitionKey(r), r]));
      const partitionBytes = (r: FetchRequest) => r.maxBytes ?? DEFAULT_PARTITION_FETCH_BYTES;
      const topics = [...groupByTopic(batch)].map(([topic, items]) => ({
        topic,
        partitions: items.map((r) => ({
          partition: r.partition,
          fetchOffset: String(r.offset),
          maxBytes: partitionBytes(r),
        })),
      }));
      const total = batch.reduce((sum, r) => sum + partitionBytes(r), 0);
      const response = (await sendRequest(broker, 'Fetch', {
        replicaId: -1,
        isolationLevel: ISOLATION_CODES[isolation],
        maxWaitTime,
        minBytes: 1,
        maxBytes: Math.min(total, MAX_FETCH_RESPONSE_BYTES),
        topics,
        rackId: '',
      })) as FetchResponse;
      const outcomes = new Map<string, ItemOutcome<FetchAnswer>>();
      if (response.errorCode !== undefined && response.errorCode !== 0) {
        for (const key of byKey.keys()) outcomes.set(key, { code: response.errorCode });
        return outcomes;
      }
      for (const { topicName: topic, partitions } of response.responses) {
        for (const p of partitions) {
          const key = partitionKey({ topic, partition: p.partition });
          const request = byKey.get(key);
          if (request === undefined) continue;
          if (p.errorCode !== 0) {
            outcomes.set(key, { code: p.errorCode });
            continue;
          }
          const { records, nextOffset } = selectRecords(p.messages, {
            requestedOffset: request.offset,
            isolation,
            abortedTransactions: p.abortedTransactions ?? [],
          });
          outcomes.set(key, {
            ok: {
              topic,
              partition: p.partition,
              requestedOffset: request.offset,
              records,
              nextOffset,
              highWatermark: Number(p.highWatermark),
              lastStableOffset: Number(p.lastStableOffset ?? -1),
              logStartOffset: Number(p.logStartOffset ?? p.lastStartOffset ?? -1),
            },
          });
        }
      }
      return outcomes;
    });
  }

  /**
   * Commits offsets for a group the way Java's `AdminClient.alterConsumerGroupOffsets` does: one
   * OffsetCommit to the group coordinator with generation -1 and no member id, never joining the group.
   * A group with live members refuses: those answers carry `GROUP_ACTIVE` (not retryable) and the
   * committed offsets stay as they were.
   * Answers come in entry order; when a partition is named twice, the later entry is committed last.
   */
  async commitOffsets(groupId: string, entries: readonly CommitEntry[]): Promise<CommitAnswer[]> {
    await this.ready();
    const answers: CommitAnswer[] = entries.map((e) => ({ topic: e.topic, partition: e.partition }));
    for (const wave of wavesOf(entries)) {
      const valid = wave.filter((i) => {
        const invalid = invalidItem('commitOffsets', entries[i]!);
        if (invalid !== undefined) answers[i] = { ...answers[i]!, error: invalid };
        return invalid === undefined;
      });
      if (valid.length > 0) await this.commitWave(groupId, entries, valid, answers);
    }
    return answers;
  }

  /** The offsets a group has committed (all topics, or only `topics`); partitions without one are left out. */
  async fetchCommittedOffsets(groupId: string, topics?: readonly string[]): Promise<CommittedOffset[]> {
    await this.ready();
    const wanted = topics === undefined ? undefined : new Set(topics);
    const response = await this.withCoordinator(groupId, 'fetchCommittedOffsets', async (broker) => {
      // An empty topic list is sent as null: every topic the group has committed.
      const r = (await sendRequest(broker, 'OffsetFetch', { groupId, topics: [] })) as OffsetFetchResponse;
      return { result: r, code: r.errorCode ?? 0 };
    });
    const committed: CommittedOffset[] = [];
    for (const { topic, partitions } of response.responses) {
      if (wanted !== undefined && !wanted.has(topic)) continue;
      for (const p of partitions) {
        if (p.errorCode !== 0) {
          throw this.brokerError(p.errorCode, 'fetchCommittedOffsets', {
            groupId,
            topic,
            partition: p.partition,
          });
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

  /**
   * State, protocol type and member count of a group, from DescribeGroups; an unknown group is `Dead`.
   *
   * Only groups of the classic protocol are visible this way: for a group of the KIP-848 consumer
   * protocol (`group.protocol=consumer`) Kafka 4.1 answers `Dead` even while it has members (seen against
   * the test bed). Do not decide that a group is free from this; commitOffsets is refused for live groups
   * of both protocols.
   */
  async describeGroup(groupId: string): Promise<GroupDescription> {
    await this.ready();
    return this.withCoordinator(groupId, 'describeGroup', async (broker) => {
      const r = (await sendRequest(broker, 'DescribeGroups', {
        groupIds: [groupId],
      })) as DescribeGroupsResponse;
      const group = r.groups.find((g) => g.groupId === groupId) ?? r.groups[0];
      if (group === undefined) {
        throw new OffsetSyncError(`describeGroup: no answer for group ${groupId}`, {
          code: ErrorCodes.KAFKA_PROTOCOL,
          details: { groupId },
        });
      }
      if (group.errorCode === BrokerErrorCodes.GROUP_ID_NOT_FOUND) {
        return { result: { state: 'Dead', protocolType: '', memberCount: 0 }, code: 0 };
      }
      return {
        result: { state: group.state, protocolType: group.protocolType, memberCount: group.members.length },
        code: group.errorCode,
      };
    });
  }

  // --- internals ------------------------------------------------------------------------------------

  private async ready(): Promise<void> {
    if (this.disconnecting) throw closedError();
    await this.connect();
    // kafkajs may have added brokers while looking for one (findBroker refreshes on its own).
    makeBrokerMetadataLenient(this.cluster.brokerPool);
  }

  /** Lets kafkajs read the broker list (host and port of every node id) again. */
  private async refreshBrokers(): Promise<void> {
    makeBrokerMetadataLenient(this.cluster.brokerPool);
    await this.cluster.refreshMetadata();
    makeBrokerMetadataLenient(this.cluster.brokerPool);
  }

  private emitRequest(eventName: string, payload: unknown): void {
    if (eventName !== 'network.request' || this.requestListeners.size === 0) return;
    const p = payload as {
      apiName: string;
      apiVersion: number;
      broker: string;
      duration: number;
      size: number;
    };
    const event: KafkaRequestEvent = {
      apiName: p.apiName,
      apiVersion: p.apiVersion,
      broker: p.broker,
      durationMs: p.duration,
      sizeBytes: p.size,
    };
    for (const listener of this.requestListeners) {
      try {
        listener(event);
      } catch (error: unknown) {
        this.logger.warn({ err: error }, 'a Kafka request listener failed');
      }
    }
  }

  private brokerError(code: number, operation: string, details: Record<string, unknown>): OffsetSyncError {
    return toOffsetSyncError(kafkajsInternals().createErrorFromCode(code), { operation, details });
  }

  /** Metadata of `topics`, one Metadata request to any broker. Whole-call failures reject. */
  private async readTopics(topics: readonly string[]): Promise<Map<string, TopicState>> {
    const states = new Map<string, TopicState>();
    if (topics.length === 0) return states; // an empty list would ask for every topic
    const response = (await this.withAnyBroker('metadata', (broker) =>
      sendRequest(broker, 'Metadata', { topics: [...topics], allowAutoTopicCreation: false }),
    )) as MetadataResponse;
    const known = new Set(this.cluster.getNodeIds().map(Number));
    if (response.brokers.some((b) => !known.has(b.nodeId))) {
      // A broker kafkajs does not know yet: let it read the broker list so findBroker can reach it.
      await this.refreshBrokers();
    }
    const expiresAt = Date.now() + this.metadataMaxAgeMs;
    for (const t of response.topicMetadata) {
      let state: TopicState;
      if (
        t.topicErrorCode === BrokerErrorCodes.UNKNOWN_TOPIC_OR_PARTITION ||
        t.topicErrorCode === BrokerErrorCodes.INVALID_TOPIC_EXCEPTION
      ) {
        state = { kind: 'missing' };
      } else if (t.topicErrorCode !== 0 && t.topicErrorCode !== BrokerErrorCodes.LEADER_NOT_AVAILABLE) {
        state = { kind: 'failed', error: this.brokerError(t.topicErrorCode, 'metadata', { topic: t.topic }) };
      } else {
        // A partition without a leader has leader -1; requests for it fail as LEADER_NOT_AVAILABLE.
        const leaders = new Map(t.partitionMetadata.map((p) => [p.partitionId, p.leader]));
        state = { kind: 'present', leaders, expiresAt };
      }
      states.set(t.topic, state);
      if (state.kind === 'present') this.topics.set(t.topic, state);
      else this.topics.delete(t.topic);
    }
    for (const topic of topics) if (!states.has(topic)) states.set(topic, { kind: 'missing' });
    return states;
  }

  /** Runs `call` against a connected broker, trying each known broker before giving up. */
  private async withAnyBroker<T>(
    operation: string,
    call: (broker: InternalBroker) => Promise<T>,
  ): Promise<T> {
    let lastError: unknown = new OffsetSyncError('no broker known', { code: ErrorCodes.KAFKA_UNREACHABLE });
    for (let attempt = 0; attempt < 2; attempt += 1) {
      for (const nodeId of this.cluster.getNodeIds()) {
        try {
          return await call(await this.cluster.findBroker({ nodeId }));
        } catch (error: unknown) {
          if (error instanceof ResponseDecodeError) throw toOffsetSyncError(error, { operation });
          lastError = error;
        }
      }
      if (attempt === 0) {
        try {
          await this.refreshBrokers();
        } catch (error: unknown) {
          lastError = error;
          break;
        }
      }
    }
    throw toOffsetSyncError(lastError, { operation });
  }

  /**
   * The skeleton of every partition-level call: split repeats into waves, look up leaders, send one
   * request per leader broker in parallel, then look leaders up again for the partitions whose leader
   * moved (or whose broker could not be reached) and retry those once.
   */
  private async perLeader<Q extends TopicPartition, A>(
    operation: string,
    items: readonly Q[],
    failed: (item: Q, error: OffsetSyncError) => A,
    send: (broker: InternalBroker, batch: readonly Q[]) => Promise<Map<string, ItemOutcome<A>>>,
  ): Promise<A[]> {
    const answers = new Array<A>(items.length);
    const runWave = async (wave: readonly number[]) => {
      let pending = wave.filter((i) => {
        const invalid = invalidItem(operation, items[i]!);
        if (invalid !== undefined) answers[i] = failed(items[i]!, invalid);
        return invalid === undefined;
      });
      for (const final of [false, true]) {
        if (pending.length === 0) return;
        const retry: number[] = [];
        const settle = (i: number, outcome: ItemOutcome<A>) => {
          const item = items[i]!;
          if ('ok' in outcome) answers[i] = outcome.ok;
          else if (!final && leaderMoved(outcome)) retry.push(i);
          else
            answers[i] = failed(
              item,
              'error' in outcome ? outcome.error : this.partitionError(outcome.code, operation, item),
            );
        };
        const routes = await this.leadersFor(
          pending.map((i) => items[i]!),
          { refresh: final },
        );
        const byLeader = new Map<number, number[]>();
        for (const i of pending) {
          const route = routes.get(partitionKey(items[i]!)) ?? -1;
          if (route instanceof OffsetSyncError) settle(i, { error: route });
          else if (route < 0) settle(i, { code: BrokerErrorCodes.LEADER_NOT_AVAILABLE });
          else byLeader.set(route, [...(byLeader.get(route) ?? []), i]);
        }
        await Promise.all(
          [...byLeader].map(async ([leader, indexes]) => {
            const batch = indexes.map((i) => items[i]!);
            const outcomes = await this.sendToLeader(operation, leader, batch, send);
            for (const i of indexes)
              settle(i, outcomes.get(partitionKey(items[i]!)) ?? noAnswer(operation, items[i]!));
          }),
        );
        for (const i of retry) this.topics.delete(items[i]!.topic);
        pending = retry;
      }
    };
    await Promise.all(wavesOf(items).map(runWave));
    return answers;
  }

  /** For each item: its leader's node id, or the error that makes the partition unusable. */
  private async leadersFor(
    items: readonly TopicPartition[],
    options: { refresh: boolean },
  ): Promise<Map<string, number | OffsetSyncError>> {
    const now = Date.now();
    const stale = new Set<string>();
    for (const item of items) {
      const cached = this.topics.get(item.topic);
      if (
        options.refresh ||
        cached?.kind !== 'present' ||
        cached.expiresAt <= now ||
        !cached.leaders.has(item.partition)
      ) {
        stale.add(item.topic);
      }
    }
    const fresh = await this.readTopics([...stale]);
    const routes = new Map<string, number | OffsetSyncError>();
    for (const item of items) {
      const state = fresh.get(item.topic) ?? this.topics.get(item.topic) ?? { kind: 'missing' };
      if (state.kind === 'missing')
        routes.set(partitionKey(item), missingError(item, ErrorCodes.TOPIC_MISSING));
      else if (state.kind === 'failed') routes.set(partitionKey(item), state.error);
      else {
        const leader = state.leaders.get(item.partition);
        routes.set(partitionKey(item), leader ?? missingError(item, ErrorCodes.PARTITION_MISSING));
      }
    }
    return routes;
  }

  /**
   * Sends one batch to a leader. A failure of the request becomes every item's outcome (unreachable
   * brokers are retried by the caller); a response that cannot be decoded is asked for again partition
   * by partition, so one bad partition does not cost the others their answers.
   */
  private async sendToLeader<Q extends TopicPartition, A>(
    operation: string,
    leader: number,
    batch: readonly Q[],
    send: (broker: InternalBroker, batch: readonly Q[]) => Promise<Map<string, ItemOutcome<A>>>,
  ): Promise<Map<string, ItemOutcome<A>>> {
    try {
      const broker = await this.cluster.findBroker({ nodeId: leader });
      return await send(broker, batch);
    } catch (error: unknown) {
      if (error instanceof ResponseDecodeError && batch.length > 1) {
        const singles = await Promise.all(
          batch.map((item) => this.sendToLeader(operation, leader, [item], send)),
        );
        return new Map(singles.flatMap((m) => [...m]));
      }
      const mapped =
        error instanceof ResponseDecodeError
          ? new OffsetSyncError(`${operation}: ${error.message}`, {
              code: ErrorCodes.DECODE_ERROR,
              cause: error.cause,
              details: { nodeId: leader },
            })
          : toOffsetSyncError(error, { operation, details: { nodeId: leader } });
      return new Map(batch.map((item) => [partitionKey(item), { error: withDetails(mapped, item) }]));
    }
  }

  private partitionError(code: number, operation: string, item: TopicPartition): OffsetSyncError {
    if (code === BrokerErrorCodes.UNKNOWN_TOPIC_OR_PARTITION) {
      // Still unknown after the metadata refresh: the topic or partition is gone.
      const state = this.topics.get(item.topic);
      return missingError(
        item,
        state?.kind === 'present' ? ErrorCodes.PARTITION_MISSING : ErrorCodes.TOPIC_MISSING,
      );
    }
    return this.brokerError(code, operation, { topic: item.topic, partition: item.partition });
  }

  /** One wave of commitOffsets (no partition twice), retried once if the coordinator moved. */
  private async commitWave(
    groupId: string,
    entries: readonly CommitEntry[],
    wave: readonly number[],
    answers: CommitAnswer[],
  ): Promise<void> {
    const byKey = new Map(wave.map((i) => [partitionKey(entries[i]!), i]));
    await this.withCoordinator(groupId, 'commitOffsets', async (broker, final) => {
      const topics = [...groupByTopic(wave.map((i) => entries[i]!))].map(([topic, items]) => ({
        topic,
        partitions: items.map((e) => ({
          partition: e.partition,
          offset: String(e.offset),
          metadata: e.metadata,
        })),
      }));
      const response = (await sendRequest(broker, 'OffsetCommit', {
        groupId,
        groupGenerationId: -1,
        memberId: '',
        retentionTime: -1,
        topics,
      })) as OffsetCommitResponse;
      let moved = 0;
      for (const { topic, partitions } of response.responses) {
        for (const p of partitions) {
          const i = byKey.get(partitionKey({ topic, partition: p.partition }));
          if (i === undefined) continue;
          if (COORDINATOR_MOVED_CODES.has(p.errorCode)) moved = p.errorCode;
          answers[i] =
            p.errorCode === 0
              ? { topic, partition: p.partition }
              : {
                  topic,
                  partition: p.partition,
                  error: this.commitError(p.errorCode, groupId, topic, p.partition),
                };
        }
      }
      // The answers carry every partition's error; only a moved coordinator is worth another attempt.
      return { result: undefined, code: final ? 0 : moved };
    });
  }

  private commitError(code: number, groupId: string, topic: string, partition: number): OffsetSyncError {
    const brokerError = this.brokerError(code, 'commitOffsets', { groupId, topic, partition });
    if (!GROUP_ACTIVE_CODES.has(code)) return brokerError;
    return new OffsetSyncError(`commit to group ${groupId} refused: the group has live members`, {
      code: ErrorCodes.GROUP_ACTIVE,
      retryable: false,
      cause: brokerError,
      details: { ...brokerError.details },
    });
  }

  /**
   * Runs `call` against the group's coordinator. `call` reports the group-level error code it saw; when
   * that says the coordinator moved (or the coordinator could not be reached), the coordinator is looked
   * up again and `call` runs once more (`final` tells it which attempt it is). Other non-zero codes
   * reject.
   */
  private async withCoordinator<T>(
    groupId: string,
    operation: string,
    call: (broker: InternalBroker, final: boolean) => Promise<{ result: T; code: number }>,
  ): Promise<T> {
    const lane = await this.groupLane(groupId);
    for (let attempt = 0; ; attempt += 1) {
      const final = attempt === 1;
      let outcome: { result: T; code: number };
      try {
        const broker = await this.coordinator(lane, groupId);
        outcome = await call(broker, final);
      } catch (error: unknown) {
        this.coordinators.delete(groupId);
        const mapped = toOffsetSyncError(error, { operation, details: { groupId } });
        if (final || mapped.code !== ErrorCodes.KAFKA_UNREACHABLE) throw mapped;
        continue;
      }
      if (outcome.code === 0) return outcome.result;
      this.coordinators.delete(groupId);
      if (COORDINATOR_MOVED_CODES.has(outcome.code) && !final) continue;
      throw this.brokerError(outcome.code, operation, { groupId });
    }
  }

  /** The connected cluster whose connections carry the group's requests (always the same for a group). */
  private async groupLane(groupId: string): Promise<InternalCluster> {
    const lane = this.groupLanes[laneOf(groupId, this.groupLanes.length)]!;
    if (lane.cluster === this.cluster) return lane.cluster;
    lane.connecting ??= (async () => {
      try {
        await lane.cluster.connect();
        makeBrokerMetadataLenient(lane.cluster.brokerPool);
        await lane.cluster.refreshMetadata();
        makeBrokerMetadataLenient(lane.cluster.brokerPool);
      } catch (error: unknown) {
        lane.connecting = undefined;
        throw toOffsetSyncError(error, { operation: 'connect', details: { groupId } });
      }
    })();
    await lane.connecting;
    makeBrokerMetadataLenient(lane.cluster.brokerPool);
    return lane.cluster;
  }

  /** The group's coordinator on `lane`: the remembered node when there is one, else FindCoordinator. */
  private async coordinator(lane: InternalCluster, groupId: string): Promise<InternalBroker> {
    const known = this.coordinators.get(groupId);
    if (known !== undefined) return lane.findBroker({ nodeId: known });
    const broker = await lane.findGroupCoordinator({ groupId });
    const nodeId = Object.entries(lane.brokerPool.brokers).find(([, b]) => b === broker)?.[0];
    if (nodeId !== undefined) this.coordinators.set(groupId, nodeId);
    return broker;
  }
}

/** Which of `lanes` connections carries a group's requests: a hash (FNV-1a) of the group id. */
export function laneOf(groupId: string, lanes: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < groupId.length; i++) {
    hash ^= groupId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % lanes;
}

function timestampCode(timestamp: OffsetQuery['timestamp']): number {
  if (timestamp === 'earliest') return EARLIEST_TIMESTAMP;
  if (timestamp === 'latest') return LATEST_TIMESTAMP;
  return timestamp;
}

function invalidItem(operation: string, item: TopicPartition): OffsetSyncError | undefined {
  if (typeof item.topic !== 'string' || item.topic === '') return invalidRequest(operation, 'empty topic');
  if (!Number.isSafeInteger(item.partition) || item.partition < 0) {
    return invalidRequest(operation, `partition ${item.partition}`);
  }
  const query = item as Partial<OffsetQuery> & Partial<FetchRequest>;
  if (typeof query.timestamp === 'number' && !isOffset(query.timestamp)) {
    return invalidRequest(operation, `timestamp ${query.timestamp}`);
  }
  if (query.offset !== undefined && !isOffset(query.offset))
    return invalidRequest(operation, `offset ${query.offset}`);
  if (query.maxBytes !== undefined && !(Number.isSafeInteger(query.maxBytes) && query.maxBytes > 0)) {
    return invalidRequest(operation, `maxBytes ${query.maxBytes}`);
  }
  return undefined;
}

function invalidRequest(operation: string, what: string): OffsetSyncError {
  return new OffsetSyncError(`${operation}: invalid ${what}`, {
    code: ErrorCodes.KAFKA_PROTOCOL,
    retryable: false,
  });
}

function missingError(
  item: TopicPartition,
  code: typeof ErrorCodes.TOPIC_MISSING | typeof ErrorCodes.PARTITION_MISSING,
): OffsetSyncError {
  const what =
    code === ErrorCodes.TOPIC_MISSING ? `topic ${item.topic}` : `partition ${item.topic}-${item.partition}`;
  return new OffsetSyncError(`${what} does not exist on the cluster`, {
    code,
    retryable: false,
    details: {
      brokerError: 'UNKNOWN_TOPIC_OR_PARTITION',
      brokerCode: BrokerErrorCodes.UNKNOWN_TOPIC_OR_PARTITION,
      topic: item.topic,
      partition: item.partition,
    },
  });
}

function withDetails(error: OffsetSyncError, item: TopicPartition): OffsetSyncError {
  return new OffsetSyncError(error.message, {
    code: error.code,
    retryable: error.retryable,
    cause: error.cause,
    details: { ...error.details, topic: item.topic, partition: item.partition },
  });
}

function closedError(): OffsetSyncError {
  return new OffsetSyncError('the Kafka adapter was disconnected', { code: ErrorCodes.LIFECYCLE });
}
