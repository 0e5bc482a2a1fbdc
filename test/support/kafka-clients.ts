import { readFileSync } from 'node:fs';
import kafkajs, { type Admin, type KafkaConfig, type Kafka as KafkaClient } from 'kafkajs';
import pino from 'pino';
import { onTestFinished } from 'vitest';
import { KafkaAdapter } from '@offsetsync/kafka';
import type { KafkaClusterConfig } from '@offsetsync/runtime';
import { bedKafkaCredentials, type KafkaClientCredentials, type TestbedInfo } from '../infra/testbed.js';

const { Kafka, logLevel } = kafkajs;

/**
 * A kafkajs client for one of the test bed's clusters, quiet unless something is wrong. With
 * `credentials` it logs in over SASL_SSL (SCRAM-SHA-512), as the secured bed requires.
 */
export function kafkaClient(
  bootstrapServers: string,
  clientId = 'offsetsync-test',
  credentials?: KafkaClientCredentials,
): KafkaClient {
  return new Kafka({
    clientId,
    brokers: [bootstrapServers],
    logLevel: logLevel.ERROR,
    ...(credentials === undefined ? {} : kafkajsLogin(credentials)),
  });
}

/** A kafkajs client logged in as `user` (a bed Kafka user, or `admin`) to a cluster of the secured bed. */
export function bedKafkaClient(
  testbed: TestbedInfo,
  cluster: 'source' | 'target',
  user: string,
  clientId = 'offsetsync-test',
): KafkaClient {
  return kafkaClient(testbed[cluster].bootstrapServers, clientId, bedKafkaCredentials(testbed, user));
}

/** kafkajs' TLS and SASL options for a SCRAM-SHA-512 login, verifying the broker with the bed's CA. */
function kafkajsLogin(credentials: KafkaClientCredentials): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  return {
    ssl: { ca: [readFileSync(credentials.caFile)], rejectUnauthorized: true },
    sasl: { mechanism: 'scram-sha-512', username: credentials.username, password: credentials.password },
  };
}

/** A connected admin client, disconnected when the current test finishes. */
export async function connectedAdmin(kafka: KafkaClient): Promise<Admin> {
  const admin = kafka.admin();
  await admin.connect();
  onTestFinished(() => admin.disconnect());
  return admin;
}

/**
 * The project's Kafka adapter for one of the test bed's clusters, quiet, disconnected when the current
 * test finishes. With `credentials` it connects over SASL_SSL as the secured bed requires.
 */
export function testAdapter(
  bootstrapServers: string,
  clientId = 'offsetsync-test',
  credentials?: KafkaClientCredentials,
): KafkaAdapter {
  const cluster: KafkaClusterConfig = {
    bootstrapServers: [bootstrapServers],
    connectionTimeoutMs: 3000,
    requestTimeoutMs: 30_000,
    ...(credentials === undefined
      ? {}
      : {
          tls: { enabled: true, caFile: credentials.caFile, rejectUnauthorized: true },
          sasl: {
            mechanism: 'scram-sha-512' as const,
            username: credentials.username,
            password: credentials.password,
          },
        }),
  };
  const adapter = new KafkaAdapter({ cluster, clientId, logger: pino({ level: 'silent' }) });
  onTestFinished(() => adapter.disconnect());
  return adapter;
}
