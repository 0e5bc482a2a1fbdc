// kafkajs' client options from offsetsync's cluster configuration: bootstrap servers, timeouts, TLS (the
// files are read here, every unreadable one reported at once), SASL, and kafkajs' log lines routed to the
// service's logger.
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import kafkajs, { type KafkaConfig, type SASLOptions } from 'kafkajs';
import { ConfigError, readSecretFile, type ConfigProblem } from '@offsetsync/contracts';
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
  if (cluster.sasl !== undefined) config.sasl = saslOptions(cluster.sasl, logger);
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

/**
 * kafkajs' SASL options. A password from a file is a getter that reads the file: kafkajs reads the
 * password of this very object each time a new broker connection authenticates, so a corrected or rotated
 * Secret is used from the next connection on, without a restart. A file that cannot be read yields an
 * empty password, which the broker refuses as a failed authentication (reported and retried) rather than
 * an error kafkajs would not classify; the reason is logged once per distinct failure.
 */
function saslOptions(sasl: NonNullable<KafkaClusterConfig['sasl']>, logger: Logger): SASLOptions {
  const { username, mechanism } = sasl;
  const file = sasl.passwordFile;
  if (file === undefined) return withMechanism(mechanism, username, () => sasl.password ?? '');
  let lastFailure: string | undefined;
  return withMechanism(mechanism, username, () => {
    try {
      const password = readSecretFile(file);
      lastFailure = undefined;
      return password;
    } catch (e: unknown) {
      const reason = e instanceof Error ? e.message : String(e);
      if (reason !== lastFailure)
        logger.error({ passwordFile: file, reason }, 'cannot read the SASL password file');
      lastFailure = reason;
      return '';
    }
  });
}

function withMechanism(
  mechanism: NonNullable<KafkaClusterConfig['sasl']>['mechanism'],
  username: string,
  password: () => string,
): SASLOptions {
  const options = { mechanism, username } as SASLOptions & { password: string };
  Object.defineProperty(options, 'password', { get: password, enumerable: true });
  return options;
}
