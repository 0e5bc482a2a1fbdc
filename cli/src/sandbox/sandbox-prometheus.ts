// `offsetsync sandbox --prometheus`: Debian's Prometheus (/usr/bin/prometheus, package `prometheus`)
// scraping the sandbox's offsetsync processes, with the chart's own alert rules (deploy/helm/offsetsync/files).
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { freePort, GiveUp, isAlive, spawnDetached, waitFor } from '@offsetsync/testbed';

/** The rules file the chart ships; the same from src/ and from dist/. */
export const ALERT_RULES_FILE = fileURLToPath(
  new URL('../../../deploy/helm/offsetsync/files/offsetsync-alerts.rules.yaml', import.meta.url),
);

/** Where Debian's package puts Prometheus. */
const PROMETHEUS_BINARY = '/usr/bin/prometheus';

/**
 * Scrape and rule evaluation interval (s). Short, so that an alert fires about its `for` after the state
 * it watches began (the services' heartbeats are 1 s apart in the sandbox).
 */
const INTERVAL_S = 2;

/** One service's metrics endpoint. */
export interface ScrapeTarget {
  /** The job name: `offsetsync-<role>`. */
  role: string;
  /** `host:port` of its /metrics. */
  address: string;
}

/**
 * prometheus.yml for the sandbox: one job per role, with every process of that role as a target of it
 * (Prometheus refuses two jobs of one name), and the chart's rules. Pure.
 */
export function prometheusConfig(targets: readonly ScrapeTarget[], rulesFile: string): string {
  const byRole = new Map<string, string[]>();
  for (const t of targets) byRole.set(t.role, [...(byRole.get(t.role) ?? []), t.address]);
  return stringify({
    global: { scrape_interval: `${INTERVAL_S}s`, evaluation_interval: `${INTERVAL_S}s` },
    rule_files: [rulesFile],
    scrape_configs: [...byRole].map(([role, addresses]) => ({
      job_name: `offsetsync-${role}`,
      static_configs: [{ targets: addresses }],
    })),
  });
}

/** A running sandbox Prometheus. */
export interface SandboxPrometheus {
  pid: number;
  /** `host:port` of its web UI and API. */
  address: string;
  configFile: string;
  logFile: string;
}

/**
 * Starts Prometheus in `dir` (config, data and log there) and resolves once it is ready. Fails when the
 * binary or the rules file is missing, or when it does not get ready within `readyTimeoutMs`; `started`
 * hears its pid at once, so a failed start can still be stopped.
 */
export async function startSandboxPrometheus(options: {
  dir: string;
  targets: readonly ScrapeTarget[];
  readyTimeoutMs: number;
  started: (pid: number) => void;
}): Promise<SandboxPrometheus> {
  if (!existsSync(PROMETHEUS_BINARY))
    throw new Error(`--prometheus needs ${PROMETHEUS_BINARY}: apt-get install prometheus`);
  if (!existsSync(ALERT_RULES_FILE))
    throw new Error(`--prometheus needs the chart's alert rules at ${ALERT_RULES_FILE}`);
  await mkdir(join(options.dir, 'data'), { recursive: true });
  const configFile = join(options.dir, 'prometheus.yml');
  await writeFile(configFile, prometheusConfig(options.targets, ALERT_RULES_FILE));
  const address = `127.0.0.1:${await freePort()}`;
  const logFile = join(options.dir, 'prometheus.log');
  const pid = spawnDetached(
    PROMETHEUS_BINARY,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(options.dir, 'data')}`,
      `--web.listen-address=${address}`,
    ],
    logFile,
  );
  options.started(pid);
  await waitFor(
    `Prometheus to be ready on ${address}`,
    async () => {
      if (!isAlive(pid)) throw new GiveUp(`Prometheus (pid ${pid}) exited; log ${logFile}`);
      return (await fetch(`http://${address}/-/ready`)).ok ? true : undefined;
    },
    { timeoutMs: options.readyTimeoutMs, intervalMs: 250 },
  );
  return { pid, address, configFile, logFile };
}
