// Runs the built collector (services/collector/dist/main.js) as its own process, the way it runs in
// production, for benchmarks. test/support/service-process.ts does the same for tests but ties the
// process to vitest's test lifecycle; here the caller stops it.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENV_PREFIX } from '@offsetsync/common';
import { REPO_ROOT } from '../../test/infra/testbed.js';

export interface CollectorProcess {
  pid: number;
  /** Folder holding the config and the log. */
  dir: string;
  /** The service's JSON log lines (stdout and stderr). */
  logFile: string;
  /** Resolves with the exit code (null when ended by a signal). */
  exited: Promise<number | null>;
  /** Whether the process still runs. */
  running(): boolean;
  /** SIGTERM, then SIGKILL once `graceMs` (default 15 s) has passed; resolves with the exit code. */
  stop(options?: { graceMs?: number }): Promise<number | null>;
  log(): Promise<string>;
}

/**
 * The environment without OFFSETSYNC_* variables: the service reads every one of them as a config
 * override and refuses names it does not know, such as OFFSETSYNC_TESTBED meant for the benchmark.
 */
function serviceEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith(ENV_PREFIX)));
}

/**
 * Starts `node [nodeArgs] services/collector/dist/main.js --config <file>` with `config` as its config
 * file. `npm run build` must have run.
 */
export async function startCollectorProcess(
  config: Record<string, unknown>,
  options: { nodeArgs?: readonly string[] } = {},
): Promise<CollectorProcess> {
  const main = join(REPO_ROOT, 'services', 'collector', 'dist', 'main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run 'npm run build' first`);
  const dir = await mkdtemp(join(tmpdir(), 'offsetsync-bench-collector-'));
  const configFile = join(dir, 'config.yaml');
  const logFile = join(dir, 'service.log');
  // JSON is YAML: no YAML writer needed for a generated config.
  await writeFile(configFile, `${JSON.stringify(config, null, 2)}\n`);
  const fd = openSync(logFile, 'a');
  let child;
  try {
    child = spawn(process.execPath, [...(options.nodeArgs ?? []), main, '--config', configFile], {
      cwd: REPO_ROOT,
      stdio: ['ignore', fd, fd],
      env: serviceEnv(process.env),
    });
  } finally {
    closeSync(fd);
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error('could not start the collector');
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      exitCode = code;
      resolve(code);
    }),
  );
  const running = (): boolean => exitCode === undefined;
  let stopping: Promise<number | null> | undefined;
  return {
    pid,
    dir,
    logFile,
    exited,
    running,
    stop(stopOptions = {}) {
      stopping ??= (async () => {
        if (!running()) return exited;
        child.kill('SIGTERM');
        const grace = setTimeout(() => {
          if (running()) child.kill('SIGKILL');
        }, stopOptions.graceMs ?? 15_000);
        try {
          return await exited;
        } finally {
          clearTimeout(grace);
        }
      })();
      return stopping;
    },
    log: () => readFile(logFile, 'utf8'),
  };
}
