// The offsetsync processes of the sandbox: one collector and one health service, and a translator and a
// committer for each target (each serves the one target its config names, as in a deployment). They share
// one config file; what differs between them comes from OFFSETSYNC_* variables.
import { stringify } from 'yaml';
import { ENV_PREFIX } from '@offsetsync/runtime';
import { SANDBOX_SOURCE, sandboxLink, type SandboxTarget } from './sandbox-targets.js';

/** What a sandbox process runs: the `offsetsync <role>` command. */
export type SandboxRole = 'health' | 'committer' | 'translator' | 'collector';

/** One offsetsync process of the sandbox. */
export interface SandboxServiceSpec {
  role: SandboxRole;
  /** The target a translator or committer serves; unset for the collector and health. */
  target?: string;
}

/**
 * The processes, in the order they are started: health first (it hears everyone), the target side
 * before the collector, so that the first source commits find it listening.
 */
export function sandboxServiceSpecs(targets: readonly SandboxTarget[]): SandboxServiceSpec[] {
  return [
    { role: 'health' },
    ...targets.map((t) => ({ role: 'committer' as const, target: t.cluster })),
    ...targets.map((t) => ({ role: 'translator' as const, target: t.cluster })),
    { role: 'collector' },
  ];
}

/** How the sandbox names a process in what it prints and in its log file: `committer of cloud`. */
export function serviceName(spec: SandboxServiceSpec): string {
  return spec.target === undefined ? spec.role : `${spec.role} of ${spec.target}`;
}

/** The process's log file name, in the config file's folder: `committer-cloud.log`. */
export function serviceLogName(spec: SandboxServiceSpec): string {
  return spec.target === undefined ? `${spec.role}.log` : `${spec.role}-${spec.target}.log`;
}

/** `health (pid 11), committer of target (pid 12), ...`: the line the sandbox test takes pids from. */
export function formatServicePids(services: ReadonlyArray<SandboxServiceSpec & { pid: number }>): string {
  return services.map((s) => `${serviceName(s)} (pid ${s.pid})`).join(', ');
}

/** Where the sandbox's servers are, for {@link sandboxServiceConfig}. */
export interface SandboxServers {
  /** Bootstrap servers by cluster alias: the source and every target. */
  kafka: Readonly<Record<string, string>>;
  natsUrl: string;
  subjectPrefix: string;
  /** Port of the health service's gRPC API. */
  healthPort: number;
}

/**
 * The one config file of every sandbox process, as an object (YAML once stringified): every cluster, a
 * link to each target, and the sections of each role. `translator.target` and `committer.target` name
 * the first target; the others' processes get theirs from {@link serviceEnv}. Pure.
 */
export function sandboxServiceConfig(
  servers: SandboxServers,
  targets: readonly SandboxTarget[],
): Record<string, unknown> {
  const first = targets[0];
  if (first === undefined) throw new Error('the sandbox needs at least one target');
  const cluster = (bootstrapServers: string | undefined) => {
    if (bootstrapServers === undefined) throw new Error('a sandbox cluster has no bootstrap servers');
    return { bootstrapServers: [bootstrapServers], connectionTimeoutMs: '3s', requestTimeoutMs: '10s' };
  };
  return {
    clusters: Object.fromEntries(
      [SANDBOX_SOURCE, ...targets.map((t) => t.cluster)].map((alias) => [
        alias,
        cluster(servers.kafka[alias]),
      ]),
    ),
    links: targets.map(sandboxLink),
    nats: { servers: [servers.natsUrl], subjectPrefix: servers.subjectPrefix },
    collector: { cluster: SANDBOX_SOURCE, fetchMaxWaitMs: '20ms' },
    translator: { target: first.cluster, pendingRetryMinMs: '100ms', pendingRetryMaxMs: '1s' },
    committer: { target: first.cluster },
    health: { grpc: { host: '127.0.0.1', port: servers.healthPort } },
    heartbeat: { intervalMs: '1s' },
    // The processes share this file: each takes a free port for its own probe endpoint.
    probes: { port: 0 },
    telemetry: { prometheus: { enabled: false } },
    logging: { level: 'info' },
  };
}

/** {@link sandboxServiceConfig} as the file's text, with a header that says who reads it and how. */
export function sandboxServiceConfigText(
  servers: SandboxServers,
  targets: readonly SandboxTarget[],
  specs: readonly SandboxServiceSpec[],
): string {
  return [
    `# Written by offsetsync sandbox: the one config file of its ${specs.length} offsetsync processes. Each`,
    `# translator and committer runs with ${ENV_PREFIX}TRANSLATOR__TARGET or ${ENV_PREFIX}COMMITTER__TARGET`,
    `# set to the target it serves (${targets.map((t) => t.cluster).join(', ')}), over translator.target and committer.target below.`,
    stringify(sandboxServiceConfig(servers, targets)),
  ].join('\n');
}

/**
 * The environment of one process: the sandbox's own without any OFFSETSYNC_* variable (so settings come
 * from the file), the target of a translator or committer, and with `metricsAddress` (`host:port`) the
 * Prometheus endpoint, which every process needs on a port of its own. Pure.
 */
export function serviceEnv(
  spec: SandboxServiceSpec,
  base: NodeJS.ProcessEnv,
  metricsAddress?: string,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(base).filter(([name]) => !name.startsWith(ENV_PREFIX)),
  );
  if (spec.target !== undefined)
    env[`${ENV_PREFIX}${spec.role === 'translator' ? 'TRANSLATOR' : 'COMMITTER'}__TARGET`] = spec.target;
  if (metricsAddress !== undefined) {
    const [host, port] = metricsAddress.split(':') as [string, string];
    env[`${ENV_PREFIX}TELEMETRY__PROMETHEUS__ENABLED`] = 'true';
    env[`${ENV_PREFIX}TELEMETRY__PROMETHEUS__HOST`] = host;
    env[`${ENV_PREFIX}TELEMETRY__PROMETHEUS__PORT`] = port;
  }
  return env;
}

/**
 * The roles of which fewer processes were heard than started, by the subjects of the heartbeats stream
 * (`<prefix>.heartbeat.<role>.<instance>`). Each process is one instance; the stream is the sandbox's
 * own and new, so the instances of a role are its processes of that role. Pure.
 */
export function unheardRoles(
  specs: readonly SandboxServiceSpec[],
  heartbeatSubjects: readonly string[],
  subjectPrefix: string,
): SandboxRole[] {
  const unheard: SandboxRole[] = [];
  for (const role of new Set(specs.map((s) => s.role))) {
    const expected = specs.filter((s) => s.role === role).length;
    const heard = heartbeatSubjects.filter((s) => s.startsWith(`${subjectPrefix}.heartbeat.${role}.`)).length;
    if (heard < expected) unheard.push(role);
  }
  return unheard;
}
