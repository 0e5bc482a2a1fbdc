// Runs the built offsetsync services (services/<role>/dist/main.js) as processes of their own, the way
// they run in production, for the benchmarks. test/support/service-process.ts does the same
// for tests but ties each process to vitest's test lifecycle; here the caller stops them.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ENV_PREFIX } from '@offsetsync/runtime';
import { REPO_ROOT } from '../../test/infra/testbed.js';

export type BenchRole = 'collector' | 'translator' | 'committer';

export interface BenchService {
  role: BenchRole;
  pid: number;
  /** Folder holding the config and the log. */
  dir: string;
  /** The service's JSON log lines (stdout and stderr). */
  logFile: string;
  /** Resolves with the exit code (null when ended by a signal). */
  exited: Promise<number | null>;
  running(): boolean;
  /** SIGTERM, then SIGKILL once `graceMs` (default 15 s) has passed; resolves with the exit code. Runs once. */
  stop(options?: { graceMs?: number }): Promise<number | null>;
  log(): Promise<string>;
}

/**
 * The environment without OFFSETSYNC_* variables: a service reads each of them as a config override and
 * refuses names it does not know, such as OFFSETSYNC_TESTBED, which is meant for the benchmark.
 */
function serviceEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith(ENV_PREFIX)));
}

/** Node.js options for every benchmark service, from `BENCH_NODE_ARGS` (space separated), e.g. `--cpu-prof`. */
function nodeArgsFromEnvironment(): string[] {
  return (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
}

/**
 * Starts `node [BENCH_NODE_ARGS] [nodeArgs] services/<role>/dist/main.js --config <file>` with `config`
 * written as YAML into a fresh temporary folder. `npm run build` must have run.
 */
export async function startBenchService(
  role: BenchRole,
  config: Record<string, unknown>,
  options: { nodeArgs?: readonly string[] } = {},
): Promise<BenchService> {
  const main = join(REPO_ROOT, 'services', role, 'dist', 'main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run 'npm run build' first`);
  const dir = await mkdtemp(join(tmpdir(), `offsetsync-bench-${role}-`));
  const configFile = join(dir, 'config.yaml');
  const logFile = join(dir, 'service.log');
  await writeFile(configFile, stringify(config));
  const fd = openSync(logFile, 'a');
  let child;
  try {
    child = spawn(
      process.execPath,
      [...nodeArgsFromEnvironment(), ...(options.nodeArgs ?? []), main, '--config', configFile],
      { cwd: REPO_ROOT, stdio: ['ignore', fd, fd], env: serviceEnvironment(process.env) },
    );
  } finally {
    closeSync(fd);
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start the ${role}`);
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
    role,
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
