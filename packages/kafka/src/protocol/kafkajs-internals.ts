// The pieces of kafkajs' internals the adapter relies on, loaded and checked in one place.
//
// Why kafkajs internals are used, and only by this package:
// - `admin.fetchTopicOffsetsByTimestamp` replaces the broker's -1 ("no record with timestamp >= T") by the
//   high watermark, which would make the translator skip records that have not been replicated yet.
// - kafkajs has no public raw fetch at an exact offset, no admin-style OffsetCommit (generation -1, no
//   member id) with metadata, and no per-partition outcome: its response parsers throw the first
//   partition's error code and drop every other partition's answer.
// So the adapter takes kafkajs' `Cluster` (broker discovery, connections, SASL, TLS) through the private
// factory the `Kafka` instance keeps under Symbol('private:Kafka:createCluster'), and sends kafkajs' own
// request encoders and response decoders through a broker's connection pool with a parser that keeps
// per-partition error codes (network/send-request.ts). `kafkajsInternals()` checks every piece it relies on
// when first used and fails with a clear message (the drift tripwire); kafkajs-internals.test.ts fails when
// a kafkajs upgrade changes any of it.
import { createRequire } from 'node:module';
import type { Kafka as KafkaClient } from 'kafkajs';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import type { ApiName } from './requests.js';

const CREATE_CLUSTER_SYMBOL = 'private:Kafka:createCluster';

const API_NAMES: readonly ApiName[] = [
  'Metadata',
  'ListOffsets',
  'Fetch',
  'OffsetCommit',
  'OffsetFetch',
  'DescribeGroups',
];

/** kafkajs' response half of a request: its decoder, and a parser that may throw on error codes. */
export interface ProtocolResponse {
  decode(raw: Buffer): Promise<unknown>;
  parse(decoded: unknown): Promise<unknown>;
}

/** A request as kafkajs' request definitions build it. */
export interface ProtocolRequest {
  request: { apiKey: number; apiName: string; apiVersion: number; encode?(): Promise<unknown> };
  response: ProtocolResponse;
  requestTimeout?: number;
}

/** kafkajs `ConnectionPool` (src/network/connectionPool.js): the parts used or replaced. */
export interface InternalConnectionPool {
  host: string;
  port: number;
  send(request: ProtocolRequest): Promise<unknown>;
  /** The pool's connection `index` (0: requests, 1: Fetch), connected first when it is not. */
  getConnection(index?: number): Promise<unknown>;
}

/** kafkajs `Broker` (src/broker/index.js): the parts used. */
export interface InternalBroker {
  connectionPool: InternalConnectionPool;
  lookupRequest(apiKey: number, definition: unknown): (args: object) => ProtocolRequest;
  metadata: (topics: string[]) => Promise<unknown>;
  disconnect(): Promise<void>;
}

/** kafkajs `BrokerPool` (src/cluster/brokerPool.js): the brokers it keeps. */
export interface InternalBrokerPool {
  seedBroker?: InternalBroker;
  brokers: Record<string, InternalBroker>;
}

/** kafkajs `Cluster` (src/cluster/index.js): the parts used. */
export interface InternalCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  refreshMetadata(): Promise<void>;
  getNodeIds(): string[];
  findBroker(query: { nodeId: number | string }): Promise<InternalBroker>;
  findGroupCoordinator(query: { groupId: string }): Promise<InternalBroker>;
  brokerPool: InternalBrokerPool;
}

/** Options of kafkajs' private cluster factory. */
export interface ClusterOptions {
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
  /** `bytes` as the kafkajs `Encoder` a request's `encode()` must return (for protocol/flexible-api.ts). */
  encoderOf(bytes: Buffer): unknown;
}

let internals: KafkajsInternals | undefined;

/** The error of a kafkajs whose internals are not the ones this build was written against: a bug. */
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
  // The connection appends what encode() returns to the request header with writeEncoder, which takes
  // only an Encoder (it reads its `buf`).
  const Encoder = require('kafkajs/src/protocol/encoder.js') as unknown;
  const writeBuffer: unknown =
    typeof Encoder === 'function' ? (Encoder.prototype as Record<string, unknown>).writeBuffer : undefined;
  if (typeof writeBuffer !== 'function') throw internalsChanged('Encoder.writeBuffer');
  const EncoderClass = Encoder as new () => { writeBuffer(bytes: Buffer): unknown };

  internals = {
    version: typeof pkg.version === 'string' ? pkg.version : 'unknown',
    apis,
    createErrorFromCode: (code) => createErrorFromCode(code),
    encoderOf: (bytes) => new EncoderClass().writeBuffer(bytes),
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

/** `broker`, after checking that it has the members requests are sent and connected through. */
export function checkBroker(broker: InternalBroker): InternalBroker {
  if (
    typeof broker.lookupRequest !== 'function' ||
    typeof broker.connectionPool?.send !== 'function' ||
    typeof broker.connectionPool.getConnection !== 'function'
  ) {
    throw internalsChanged('Broker.lookupRequest / Broker.connectionPool.send / getConnection');
  }
  return broker;
}
