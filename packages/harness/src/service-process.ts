// Runs a built offsetsync service (services/<role>/dist/main.js) as a process of its own, the way it runs
// in production, so that tests and benchmarks can stop it politely or kill -9 it. `npm run build` must
// have run (npm test and the bench scripts do).
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ENV_PREFIX } from '@offsetsync/runtime';
import { REPO_ROOT } from '@offsetsync/testbed';

export type Role = 'collector' | 'translator' | 'committer' | 'health';

export interface ServiceProcess {
  role: Role;
  pid: number;
  /** Folder holding the config and the log. */
  dir: string;
  /** The service's JSON log lines (stdout and stderr). */
  logFile: string;
  /** Resolves with the exit code (null when ended by a signal). */
  exited: Promise<number | null>;
  running(): boolean;
  /**
   * SIGTERM, then SIGKILL once `graceMs` (default 15 s) has passed; resolves with the exit code. Runs
   * once: every caller gets the same promise.
   */
  stop(options?: { graceMs?: number }): Promise<number | null>;
  /** SIGKILL: a crash, nothing flushed. */
  kill(): Promise<void>;
  /** The log so far (JSON lines). */
  log(): Promise<string>;
}

/** Options of {@link spawnService}. */
export interface SpawnServiceOptions {
  /** Environment variables of the service, on top of this process's (without its OFFSETSYNC_* ones). */
  env?: NodeJS.ProcessEnv;
  /** Node.js options before the script, e.g. `--cpu-prof`. Default: none. */
  nodeArgs?: readonly string[];
  /**
   * A command that runs node, e.g. `['strace', '-D', ...]`: started as `<wrapper...> node ...`. It must
   * exec node in the started process (as `strace -D` does), so that the pid and exit code are the service's.
   */
  wrapper?: readonly string[];
}

/**
 * The environment without OFFSETSYNC_* variables: a service reads each of them as a config override and
 * refuses names it does not know, such as OFFSETSYNC_TESTBED, which is meant for the test run.
 */
function serviceEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith(ENV_PREFIX)));
}

/**
 * Starts `node [nodeArgs] services/<role>/dist/main.js --config <file>` with `config` written as YAML
 * into a fresh temporary folder. The caller stops it (see `startService` for one tied to a test).
 */
export async function spawnService(
  role: Role,
  config: unknown,
  options: SpawnServiceOptions = {},
): Promise<ServiceProcess> {
  const main = join(REPO_ROOT, 'services', role, 'dist', 'main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run 'npm run build' first (npm test does)`);
  const dir = await mkdtemp(join(tmpdir(), `offsetsync-${role}-`));
  const configFile = join(dir, 'config.yaml');
  const logFile = join(dir, 'service.log');
  await writeFile(configFile, stringify(config));
  const fd = openSync(logFile, 'a');
  let child;
  try {
    const [command = process.execPath, ...wrapperArgs] = options.wrapper ?? [];
    const args = [
      ...wrapperArgs,
      ...(options.wrapper === undefined ? [] : [process.execPath]),
      ...(options.nodeArgs ?? []),
      main,
      '--config',
      configFile,
    ];
    child = spawn(command, args, {
      cwd: REPO_ROOT,
      stdio: ['ignore', fd, fd],
      env: { ...serviceEnvironment(process.env), ...options.env },
    });
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
    async kill() {
      if (running()) child.kill('SIGKILL');
      await exited;
    },
    log: () => readFile(logFile, 'utf8'),
  };
}
