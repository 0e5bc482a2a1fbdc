// The kafkajs clients of one adapter: the public client for the services' producers and consumers, and
// the private clusters the adapter sends its own requests through (the first also carries partition
// requests; one per group lane), whose sockets one ledger keeps.
import kafkajs, { type Kafka as KafkaClient } from 'kafkajs';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import { registerCompressionCodecs } from '../compression-codecs.js';
import {
  kafkajsInternals,
  type ClusterOptions,
  type InternalCluster,
} from '../protocol/kafkajs-internals.js';
import type { KafkaAdapterOptions } from '../types.js';
import { kafkajsClientConfig } from './client-config.js';
import { OWN_CLIENT_RETRY } from './retry-policy.js';
import { SocketLedger } from './socket-ledger.js';

const { Kafka } = kafkajs;

/** What {@link createKafkaClients} builds. */
export interface KafkaClients {
  /** A kafkajs client for the cluster (same TLS, SASL, timeouts, logging), for producers and consumers. */
  kafka: KafkaClient;
  /** One private cluster per group lane (`groupConnections`, at least one); none connected yet. */
  clusters: InternalCluster[];
  /** Every socket the private clusters open (not those of {@link kafka}). */
  sockets: SocketLedger;
}

/**
 * Builds the clients without connecting anything. Reads the TLS files (a `ConfigError` names every
 * unreadable one); `groupConnections` must be a positive integer.
 */
export function createKafkaClients(
  options: KafkaAdapterOptions,
  metadataMaxAgeMs: number,
  emit: ClusterOptions['instrumentationEmitter']['emit'],
): KafkaClients {
  registerCompressionCodecs();
  const config = kafkajsClientConfig(options.cluster, options.clientId, options.logger);
  const kafka = new Kafka(config);
  const sockets = new SocketLedger();
  const ownClient = new Kafka({ ...config, retry: { ...OWN_CLIENT_RETRY }, socketFactory: sockets.factory });
  const clusterOptions: ClusterOptions = {
    allowAutoTopicCreation: false,
    metadataMaxAge: metadataMaxAgeMs,
    maxInFlightRequests: null,
    instrumentationEmitter: { emit },
  };
  const clusters = [kafkajsInternals().createCluster(ownClient, clusterOptions)];
  const lanes = options.groupConnections ?? 1;
  if (!Number.isSafeInteger(lanes) || lanes < 1) {
    throw new OffsetSyncError(`groupConnections must be a positive integer, not ${lanes}`, {
      code: ErrorCodes.INTERNAL,
    });
  }
  for (let i = 1; i < lanes; i++) clusters.push(kafkajsInternals().createCluster(ownClient, clusterOptions));
  return { kafka, clusters, sockets };
}
