// kafkajs' client options from offsetsync's cluster configuration: bootstrap servers, timeouts, TLS (the
// files are read here, every unreadable one reported at once), SASL, and kafkajs' log lines routed to the
// service's logger.
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import kafkajs, { type KafkaConfig, type SASLOptions } from 'kafkajs';
import { ConfigError, type ConfigProblem } from '@offsetsync/contracts';
import type { KafkaClusterConfig, Logger } from '@offsetsync/runtime';

const { logLevel } = kafkajs;

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
