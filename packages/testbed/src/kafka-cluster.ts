import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import kafkajs, { type KafkaConfig } from 'kafkajs';
import { freePorts } from './free-port.js';
import {
  adminClientSecurity,
  scramFormatArgs,
  secureListenerProperties,
  type KafkaClusterSecurity,
  type KafkaControllerSecurityProtocol,
  type KafkaSecurityProtocol,
} from './kafka-security.js';
import { isAlive, spawnDetached } from './processes.js';
import { runToCompletion } from './run-command.js';
import { GiveUp, waitFor } from './wait.js';

const { Kafka, logLevel } = kafkajs;

/** One running single-node KRaft cluster (combined broker and controller). */
export interface KafkaClusterInfo {
  name: string;
  bootstrapServers: string;
  controllerPort: number;
  clusterId: string;
  /** Of the client listener on `bootstrapServers`: SASL_SSL (SCRAM-SHA-512) on the secured bed. */
  securityProtocol: KafkaSecurityProtocol;
  /** Of the controller listener on `controllerPort`: SSL with a required client certificate on the secured bed. */
  controllerSecurityProtocol: KafkaControllerSecurityProtocol;
  pid: number;
  dir: string;
  logFile: string;
}

/** A Kafka cluster id: 16 random bytes in URL-safe base64, never starting with '-' (the CLI would read a flag). */
function newClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

function plaintextListenerProperties(brokerPort: number, controllerPort: number): string[] {
  return [
    `listeners=PLAINTEXT://127.0.0.1:${brokerPort},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${brokerPort}`,
    'controller.listener.names=CONTROLLER',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'inter.broker.listener.name=PLAINTEXT',
  ];
}

function brokerProperties(options: { dataDir: string; controllerPort: number; listeners: string[] }): string {
  const { dataDir, controllerPort, listeners } = options;
  return [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
    ...listeners,
    `log.dirs=${dataDir}`,
    // A single node can only hold one replica of the internal topics.
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=10',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'share.coordinator.state.topic.replication.factor=1',
    'share.coordinator.state.topic.min.isr=1',
    // Groups form at once instead of waiting for more members.
    'group.initial.rebalance.delay.ms=0',
    // Topics exist only where a test or the product created them, so "missing on the target" is real.
    'auto.create.topics.enable=false',
    'num.partitions=1',
    '',
  ].join('\n');
}

/** A log4j2 configuration that writes everything at INFO and above to `logFile`. */
export function log4jProperties(logFile: string): string {
  return [
    'status = warn',
    'appender.file.type = File',
    'appender.file.name = file',
    `appender.file.fileName = ${logFile}`,
    'appender.file.layout.type = PatternLayout',
    'appender.file.layout.pattern = [%d] %p %m (%c)%n',
    'rootLogger.level = info',
    'rootLogger.appenderRef.file.ref = file',
    'logger.state.name = state.change.logger',
    'logger.state.level = warn',
    '',
  ].join('\n');
}

/** JVM options and classpath for a Kafka main class run from the jars in `libDir`. */
export function javaArgs(libDir: string, log4jFile: string): string[] {
  return [
    '-Xms256m',
    '-Xmx768m',
    '-XX:+UseG1GC',
    '-XX:MaxGCPauseMillis=20',
    '-Djava.awt.headless=true',
    `-Dlog4j2.configurationFile=${log4jFile}`,
    '-cp',
    `${libDir}/*`,
  ];
}

/**
 * Formats KRaft storage under `dir` with a fresh cluster id and starts a single-node cluster on free
 * loopback ports. Resolves once the broker answers a metadata request with that cluster id. With
 * `security` the only listeners are SASL_SSL (clients, brokers) and SSL (controller), the SCRAM users are
 * created at format time and the readiness check logs in as the admin.
 */
export async function startKafkaCluster(options: {
  name: string;
  dir: string;
  libDir: string;
  readyTimeoutMs?: number;
  security?: KafkaClusterSecurity;
}): Promise<KafkaClusterInfo> {
  const { name, dir, libDir, security } = options;
  const dataDir = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  const propertiesFile = join(dir, 'server.properties');
  const log4jFile = join(dir, 'log4j2.properties');
  await mkdir(dataDir, { recursive: true });
  const [brokerPort, controllerPort] = (await freePorts(2)) as [number, number];
  const clusterId = newClusterId();
  let listeners = plaintextListenerProperties(brokerPort, controllerPort);
  if (security !== undefined) {
    // Kafka's PEM key store wants the private key and the certificate chain in one file.
    const keystoreFile = join(dir, 'keystore.pem');
    const [key, cert] = await Promise.all([
      readFile(security.certificate.keyFile, 'utf8'),
      readFile(security.certificate.certFile, 'utf8'),
    ]);
    await writeFile(keystoreFile, `${key.trimEnd()}\n${cert.trimEnd()}\n`, { mode: 0o600 });
    listeners = secureListenerProperties({ brokerPort, controllerPort, keystoreFile, security });
  }
  // The file holds the broker's SCRAM password when secured: readable by its owner only.
  await writeFile(propertiesFile, brokerProperties({ dataDir, controllerPort, listeners }), { mode: 0o600 });
  await writeFile(log4jFile, log4jProperties(logFile));

  const java = javaArgs(libDir, log4jFile);
  await runToCompletion('java', [
    ...java,
    'kafka.tools.StorageTool',
    'format',
    '-t',
    clusterId,
    '-c',
    propertiesFile,
    ...(security === undefined ? [] : scramFormatArgs(security)),
  ]);
  const pid = spawnDetached('java', [...java, 'kafka.Kafka', propertiesFile], join(dir, 'stdout.log'));
  const info: KafkaClusterInfo = {
    name,
    bootstrapServers: `127.0.0.1:${brokerPort}`,
    controllerPort,
    clusterId,
    securityProtocol: security === undefined ? 'PLAINTEXT' : 'SASL_SSL',
    controllerSecurityProtocol: security === undefined ? 'PLAINTEXT' : 'SSL',
    pid,
    dir,
    logFile,
  };
  await waitForKafka(
    info,
    security === undefined ? {} : adminClientSecurity(security),
    options.readyTimeoutMs ?? 90_000,
  );
  return info;
}

/**
 * Waits until the broker answers a real metadata request carrying the expected cluster id (as the admin on
 * a secured cluster, whose authorizer answers nobody else before ACLs exist).
 */
async function waitForKafka(
  info: KafkaClusterInfo,
  login: Pick<KafkaConfig, 'ssl' | 'sasl'>,
  timeoutMs: number,
): Promise<void> {
  const kafka = new Kafka({
    clientId: 'offsetsync-testbed',
    brokers: [info.bootstrapServers],
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
    connectionTimeout: 1000,
    ...login,
  });
  await waitFor(
    `Kafka cluster '${info.name}' at ${info.bootstrapServers}`,
    async () => {
      if (!isAlive(info.pid)) {
        const tail = await readFile(info.logFile, 'utf8').catch(() => '');
        throw new GiveUp(`broker process ${info.pid} exited; log tail:\n${tail.slice(-3000)}`);
      }
      const admin = kafka.admin();
      try {
        await admin.connect();
        const cluster = await admin.describeCluster();
        if (cluster.clusterId !== info.clusterId || cluster.brokers.length === 0) return undefined;
        // Asking for a group's coordinator makes the broker create __consumer_offsets; ready means groups
        // work too, so the first test does not race the coordinator's start.
        await admin.describeGroups(['offsetsync-testbed-readiness']);
        return true;
      } finally {
        await admin.disconnect();
      }
    },
    { timeoutMs, intervalMs: 250 },
  );
}
