import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureKafkaDistribution, KAFKA_VERSION } from './kafka-dist.js';
import { startKafkaCluster, type KafkaClusterInfo } from './kafka-cluster.js';
import { restartNatsServer, startNatsServer, type NatsServerInfo } from './nats-server.js';
import { stopProcess } from './processes.js';
import type { SecureTestbedOptions, TestbedSecurityInfo } from './secure-options.js';
import { checkSecureOptions, prepareSecurity, type PreparedSecurity } from './testbed-security.js';

/** The offsetsync checkout this package sits in (packages/testbed/{src,dist} -> three levels up). */
export const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** Everything a test or the CLI needs to reach the test bed. Written to the state file by `up`. */
export interface TestbedInfo {
  kafkaVersion: string;
  workDir: string;
  /** The first of {@link TestbedInfo.clusters} (`source` unless the bed was started with other names). */
  source: KafkaClusterInfo;
  /** The second of {@link TestbedInfo.clusters}. */
  target: KafkaClusterInfo;
  /** Every Kafka cluster of the bed by name, in the order they were asked for. */
  clusters: Record<string, KafkaClusterInfo>;
  nats: NatsServerInfo;
  startedAt: string;
  /** Milliseconds from launch until both clusters and NATS answered (jar fetch excluded). */
  readyMs: number;
  /** Set on the secured bed only: its CA, certificates, admins, users and password files. */
  security?: TestbedSecurityInfo;
}

/** The state file `npm run infra -- up` writes: `$OFFSETSYNC_TESTBED_FILE`, else `.infra/testbed.json`. */
export function testbedStateFile(env: NodeJS.ProcessEnv = process.env): string {
  return env.OFFSETSYNC_TESTBED_FILE ?? join(REPO_ROOT, '.infra', 'testbed.json');
}

/** Options of {@link startTestbed}. */
export interface StartTestbedOptions {
  /** Progress lines. Default: none. */
  log?: (line: string) => void;
  /**
   * Secure the bed: Kafka only over SASL_SSL (SCRAM-SHA-512, ACLs enforced, controller over mutual TLS),
   * NATS only over TLS with user/password logins, all certificates from a CA made for this bed. Default:
   * unset, plaintext and open, as the rest of the suite uses it.
   */
  secure?: SecureTestbedOptions;
  /**
   * The Kafka clusters to start, by name: at least two (the first two are also `source` and `target`),
   * each a single node of its own. Default: `['source', 'target']`.
   */
  clusters?: readonly string[];
}

/** The clusters a bed starts when not told otherwise. */
const DEFAULT_TESTBED_CLUSTERS = ['source', 'target'] as const;

/** The cluster names of a bed, checked: at least two, distinct, usable as folder names. Pure. */
export function testbedClusterNames(names: readonly string[] = DEFAULT_TESTBED_CLUSTERS): string[] {
  if (names.length < 2) throw new Error(`a test bed needs at least two clusters, got ${names.length}`);
  for (const name of names)
    if (!/^[a-z][a-z0-9-]{0,31}$/.test(name))
      throw new Error(`test bed cluster name ${JSON.stringify(name)} must match ^[a-z][a-z0-9-]{0,31}$`);
  const repeated = names.find((name, i) => names.indexOf(name) !== i);
  if (repeated !== undefined) throw new Error(`test bed cluster ${repeated} is named twice`);
  if (names.includes('nats')) throw new Error("test bed cluster name nats is the NATS server's folder");
  return [...names];
}

/**
 * Starts independent single-node Kafka clusters (by default two, source and target) and a private
 * JetStream server, all on free loopback ports with their data in a fresh temporary folder.
 */
export async function startTestbed(options: StartTestbedOptions = {}): Promise<TestbedInfo> {
  const log = options.log ?? (() => undefined);
  // Before anything is started or written, so a mistake in the options costs nothing to find.
  const names = testbedClusterNames(options.clusters);
  if (options.secure !== undefined) checkSecureOptions(options.secure);
  const dist = await ensureKafkaDistribution({ log });
  log(
    dist.fetched ? `Kafka ${dist.version} jars fetched` : `Kafka ${dist.version} jars taken from the cache`,
  );
  const workDir = await mkdtemp(join(tmpdir(), 'offsetsync-testbed-'));
  const began = Date.now();
  const started: { clusters: KafkaClusterInfo[]; nats?: NatsServerInfo } = { clusters: [] };
  try {
    const security: PreparedSecurity | undefined =
      options.secure === undefined ? undefined : await prepareSecurity(workDir, options.secure);
    const kafka = (name: string) =>
      startKafkaCluster({
        name,
        dir: join(workDir, name),
        libDir: dist.libDir,
        ...(security === undefined ? {} : { security: security.kafka }),
      }).then((info) => {
        started.clusters.push(info);
        return info;
      });
    const [nats, ...kafkas] = await Promise.all([
      startNatsServer({
        dir: join(workDir, 'nats'),
        ...(security === undefined ? {} : { security: security.nats }),
      }).then((info) => (started.nats = info)),
      ...names.map(kafka),
    ]);
    const readyMs = Date.now() - began;
    const clusters = Object.fromEntries(kafkas.map((info) => [info.name, info]));
    log(
      `${security === undefined ? '' : 'secured: '}${kafkas.map((k) => `${k.name} Kafka ${k.bootstrapServers}`).join(', ')}, NATS ${nats.url} (${readyMs} ms)`,
    );
    return {
      kafkaVersion: KAFKA_VERSION,
      workDir,
      source: kafkas[0]!,
      target: kafkas[1]!,
      clusters,
      nats,
      startedAt: new Date(began).toISOString(),
      readyMs,
      ...(security === undefined ? {} : { security: security.info }),
    };
  } catch (error: unknown) {
    // Whatever did start must not outlive the failure; keep the logs so the failure can be read.
    const pids = [...started.clusters.map((c) => c.pid), started.nats?.pid].filter(
      (pid) => pid !== undefined,
    );
    await Promise.all(pids.map((pid) => stopProcess(pid)));
    const kept = await keepLogs(workDir);
    await rm(workDir, { recursive: true, force: true });
    throw new Error(`test bed did not start (logs kept in ${kept})`, { cause: error });
  }
}

/**
 * Starts the bed's nats-server again after a test stopped it (`stopProcess(testbed.nats.pid)`): same
 * port, store and, on the secured bed, configuration. Returns its new info (a new pid); the caller
 * keeps it so that `stopTestbed` stops the new process.
 */
export async function restartTestbedNats(testbed: TestbedInfo): Promise<NatsServerInfo> {
  const { security } = testbed;
  return restartNatsServer(
    testbed.nats,
    security === undefined
      ? undefined
      : { caFile: security.caFile, user: security.natsAdmin.user, password: security.natsAdmin.password },
  );
}

/**
 * Stops every process the test bed started, by pid, and removes its data. With `keepLogs` the server
 * logs are first copied to `.infra/logs/<time>/`; the returned string names that folder.
 */
export async function stopTestbed(
  info: TestbedInfo,
  options: { keepLogs?: boolean } = {},
): Promise<string | undefined> {
  await Promise.all([
    ...Object.values(info.clusters).map((k) => stopProcess(k.pid)),
    stopProcess(info.nats.pid),
  ]);
  const kept = options.keepLogs === true ? await keepLogs(info.workDir) : undefined;
  await rm(info.workDir, { recursive: true, force: true });
  return kept;
}

async function keepLogs(workDir: string): Promise<string> {
  const destination = join(REPO_ROOT, '.infra', 'logs', new Date().toISOString().replace(/[:.]/g, '-'));
  await mkdir(destination, { recursive: true });
  if (!existsSync(workDir)) return destination;
  for (const entry of await readdir(workDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.log')) continue;
    const from = join(entry.parentPath, entry.name);
    const to = join(destination, relative(workDir, from));
    await mkdir(dirname(to), { recursive: true });
    await cp(from, to);
  }
  return destination;
}

export async function writeTestbedFile(path: string, info: TestbedInfo): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `${JSON.stringify(info, null, 2)}\n`);
}

export async function readTestbedFile(path: string): Promise<TestbedInfo | undefined> {
  if (!existsSync(path)) return undefined;
  const info = JSON.parse(await readFile(path, 'utf8')) as Omit<TestbedInfo, 'clusters'> &
    Partial<Pick<TestbedInfo, 'clusters'>>;
  // A state file written before `clusters` existed has only source and target.
  return {
    ...info,
    clusters: info.clusters ?? { [info.source.name]: info.source, [info.target.name]: info.target },
  };
}
