// The shared start-up of every offsetsync service: config -> logger -> telemetry -> NATS (streams
// provisioned) -> the service's worker -> signals. Each service's main.ts calls runServiceMain with
// the worker that does its job; the order of shutdown is the reverse, telemetry last.
import { parseArgs } from 'node:util';
import type { NatsConnection } from 'nats';
import { ConfigError, ErrorCodes } from '@offsetsync/contracts';
import { loadConfig } from '../config/load-config.js';
import { redactConfig } from '../config/redact.js';
import type { OffsetSyncConfig } from '../config/schema.js';
import { Progress, ServiceRole } from '@offsetsync/contracts';
import { ProbeServer } from '../probes/probe-server.js';
import { HeartbeatPublisher, type HeartbeatState } from '../heartbeat/heartbeat-publisher.js';
import { createLogger, type Logger } from '../logging/logger.js';
import { connectNats, inboxPrefix, isAuthenticationError } from '@offsetsync/jetstream';
import { provisionStreams, STREAMS_OF_ROLE, streamSpecs, verifyStreams } from '@offsetsync/jetstream';
import { Names } from '@offsetsync/contracts';
import { startTelemetry, type Telemetry } from '../telemetry/telemetry.js';
import { runService, ServiceLifecycle } from './service-lifecycle.js';

export type ServiceRoleName = 'collector' | 'translator' | 'committer' | 'health';

/** What a service's worker gets once the shared plumbing runs. */
export interface ServiceContext {
  role: ServiceRoleName;
  config: OffsetSyncConfig;
  logger: Logger;
  telemetry: Telemetry;
  nats: NatsConnection;
  names: Names;
  /**
   * Loads the config again from the file and environment the process started with; throws ConfigError.
   * For the settings a service follows while it runs (health: the links). Default: none (tests).
   */
  reloadConfig?: () => OffsetSyncConfig;
}

/** The part of a service that does its job. `stop` must cope with a `start` that failed half-way. */
export interface ServiceWorker {
  start(): Promise<void>;
  stop(reason: string): Promise<void>;
  /** What the service's heartbeats report. */
  readonly heartbeat: HeartbeatState;
}

const ROLES: Record<ServiceRoleName, ServiceRole> = {
  collector: ServiceRole.SERVICE_ROLE_COLLECTOR,
  translator: ServiceRole.SERVICE_ROLE_TRANSLATOR,
  committer: ServiceRole.SERVICE_ROLE_COMMITTER,
  health: ServiceRole.SERVICE_ROLE_HEALTH,
};

/** The clusters a role serves, as its heartbeats announce them. */
function servedClusters(
  config: OffsetSyncConfig,
  role: ServiceRoleName,
): { sourceClusters: string[]; targetCluster: string; observedSourceClusters: string[] } {
  switch (role) {
    case 'collector':
      return {
        sourceClusters: config.collector ? [config.collector.cluster] : [],
        targetCluster: '',
        observedSourceClusters: [],
      };
    case 'translator':
    case 'committer': {
      const target = config[role]?.target ?? '';
      const links = config.links.filter((link) => link.target === target);
      // Only the committer acts on a link's mode: the translator translates either way.
      const observed = role === 'committer' ? links.filter((link) => link.mode === 'observe') : [];
      return {
        sourceClusters: [...new Set(links.map((link) => link.source))],
        targetCluster: target,
        observedSourceClusters: observed.map((link) => link.source),
      };
    }
    case 'health':
      return { sourceClusters: [], targetCluster: '', observedSourceClusters: [] };
  }
}

/** A service as the CLI and its own main run it: its role and the worker that does its job. */
export interface ServiceDefinition {
  role: ServiceRoleName;
  /** The service's own work. Without one the process runs the plumbing and heartbeats only. */
  createWorker?: (context: ServiceContext) => ServiceWorker;
}

/** Heartbeat contents of a process that runs the shared plumbing but no worker (yet). */
const IDLE_HEARTBEAT: HeartbeatState = {
  progress: () => Progress.fromPartial({}),
  problems: () => [],
};

/** The software version services report in heartbeats and telemetry. */
const SOFTWARE_VERSION = '0.1.0';

/**
 * Checks that the config has the section the role needs; a missing one is a config problem like any other.
 * Returns the problems (empty when fine) so the caller reports them together with the rest.
 */
function roleSectionProblems(config: OffsetSyncConfig, role: ServiceRoleName): ConfigError | undefined {
  if (role === 'health' || config[role] !== undefined) return undefined;
  return new ConfigError([{ path: role, message: `required to run the ${role} service` }]);
}

/** Parses `--config <file>` (or `-c`); the environment variable OFFSETSYNC_CONFIG works too. */
function configFileFromArgs(argv: readonly string[]): string | undefined {
  const { values } = parseArgs({
    args: [...argv],
    options: { config: { type: 'string', short: 'c' } },
    strict: true,
    allowPositionals: false,
  });
  return values.config;
}

/**
 * Runs a service process. Bad config: every problem on stderr, exit code 2. Start failure: logged once,
 * exit 1. SIGTERM/SIGINT: orderly stop within the grace period, exit 0.
 */
export async function runServiceMain(
  options: ServiceDefinition & { argv?: readonly string[]; env?: NodeJS.ProcessEnv },
): Promise<void> {
  const env = options.env ?? process.env;
  let config: OffsetSyncConfig;
  let file: string | undefined;
  try {
    file = configFileFromArgs(options.argv ?? process.argv.slice(2));
    config = loadConfig({ file, env });
    const missing = roleSectionProblems(config, options.role);
    if (missing) throw missing;
  } catch (error: unknown) {
    process.stderr.write(
      `offsetsync ${options.role}: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(2);
  }

  const serviceName = `offsetsync-${options.role}`;
  const logger = createLogger({
    service: serviceName,
    instanceId: config.instance.id,
    level: config.logging.level,
    pretty: config.logging.pretty,
  });
  logger.info({ config: redactConfig(config) }, `${serviceName} starting`);

  let telemetry: Telemetry | undefined;
  let nats: NatsConnection | undefined;
  let worker: ServiceWorker | undefined;
  let heartbeats: HeartbeatPublisher | undefined;
  let probe: ProbeServer | undefined;
  const startedAtMs = Date.now();
  const lifecycle = new ServiceLifecycle({
    name: serviceName,
    logger,
    start: async () => {
      // The probe port answers first (NOT_SERVING), so a Kubernetes probe during start-up sees a
      // process that is alive but not ready rather than a closed port.
      if (config.probes.enabled) {
        probe = await ProbeServer.start(config.probes.host, config.probes.port);
        logger.info({ host: config.probes.host, port: probe.port }, 'grpc.health.v1 probe port served');
      }
      telemetry = startTelemetry({
        serviceName,
        serviceNamespace: config.telemetry.serviceNamespace,
        instanceId: config.instance.id,
        version: config.instance.softwareVersion ?? SOFTWARE_VERSION,
        prometheus: config.telemetry.prometheus.enabled ? config.telemetry.prometheus : undefined,
      });
      const metrics = await telemetry.metricsAddress;
      if (metrics) logger.info(metrics, 'Prometheus metrics served on /metrics');
      const names = new Names(config.nats.subjectPrefix);
      nats = await connectNats(config.nats, {
        name: `${serviceName}-${config.instance.id}`,
        logger,
        inboxPrefix: inboxPrefix(names, options.role),
      });
      void exitWhenNatsCloses(nats, lifecycle, () => probe?.notServing());
      const specs = streamSpecs(names, config.nats.streamReplicas);
      const jsm = await nats.jetstreamManager();
      if (config.nats.provisioning === 'create') {
        logger.info({ streams: await provisionStreams(jsm, specs) }, 'JetStream streams provisioned');
      } else {
        // Only the streams this role uses: its NATS user may ask about no others.
        const own = new Set(STREAMS_OF_ROLE[options.role].map((kind) => names.stream(kind)));
        const differing = await verifyStreams(
          jsm,
          specs.filter((spec) => own.has(spec.name)),
        );
        if (differing.length > 0) {
          logger.warn(
            { streams: differing },
            'JetStream streams differ from what this version expects; run `offsetsync provision` to correct them',
          );
        }
      }
      const reloadConfig = () => loadConfig({ file, env });
      worker = options.createWorker?.({
        role: options.role,
        config,
        logger,
        telemetry,
        nats,
        names,
        reloadConfig,
      });
      await worker?.start();
      heartbeats = new HeartbeatPublisher(
        nats.jetstream(),
        names,
        {
          role: ROLES[options.role],
          instanceId: config.instance.id,
          ...servedClusters(config, options.role),
          softwareVersion: config.instance.softwareVersion ?? SOFTWARE_VERSION,
          startedAtMs,
          intervalMs: config.heartbeat.intervalMs,
        },
        worker?.heartbeat ?? IDLE_HEARTBEAT,
        logger,
      );
      heartbeats.start();
      probe?.serving();
    },
    stop: async (reason) => {
      probe?.notServing();
      try {
        await heartbeats?.stop();
        await worker?.stop(reason);
        await nats?.drain();
      } finally {
        await probe?.stop();
        await telemetry?.shutdown();
      }
    },
  });
  await runService(lifecycle);
}

/**
 * A NATS connection the service did not close itself has given up (the server refused the credentials
 * on reconnect, or closed the connection for good): nothing works any more, so the probe says NOT_SERVING,
 * the service stops and the process exits 1, for its supervisor to restart it with the current secrets.
 */
async function exitWhenNatsCloses(
  nats: NatsConnection,
  lifecycle: ServiceLifecycle,
  notServing: () => void,
): Promise<void> {
  const error = await nats.closed();
  if (lifecycle.state === 'stopping' || lifecycle.state === 'stopped') return;
  notServing();
  lifecycle.logger.error(
    { err: error, code: isAuthenticationError(error) ? ErrorCodes.AUTH_FAILED : ErrorCodes.NATS_UNREACHABLE },
    'the NATS connection was closed and will not reconnect; stopping with exit code 1',
  );
  await lifecycle.stop('NATS connection closed').catch(() => undefined);
  process.exit(1);
}
