// Runs an offsetsync service as its own process from the built output (`npm run build`), the way it
// runs in production, so tests can stop it politely or kill -9 it.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { onTestFinished } from 'vitest';
import { REPO_ROOT } from '../infra/testbed.js';

export type Role = 'collector' | 'translator' | 'committer' | 'health';

export interface ServiceProcess {
  role: Role;
  pid: number;
  logFile: string;
  /** SIGTERM and wait for the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL: a crash, nothing flushed. */
  kill(): Promise<void>;
  /** The log so far (JSON lines). */
  log(): Promise<string>;
  exited: Promise<number | null>;
}

/**
 * Starts `services/<role>/dist/main.js --config <file>` with the given config written as YAML. The
 * process is stopped when the current test finishes, unless the test already did.
 */
export async function startService(
  role: Role,
  config: unknown,
  options: { env?: NodeJS.ProcessEnv } = {},
): Promise<ServiceProcess> {
  const main = join(REPO_ROOT, 'services', role, 'dist', 'main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run 'npm run build' first (npm test does)`);
  const dir = await mkdtemp(join(tmpdir(), `offsetsync-${role}-`));
  const configFile = join(dir, 'config.yaml');
  const logFile = join(dir, 'service.log');
  await writeFile(configFile, stringify(config));
  const { openSync, closeSync } = await import('node:fs');
  const fd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [main, '--config', configFile], {
      stdio: ['ignore', fd, fd],
      // The test run's own OFFSETSYNC_* variables (OFFSETSYNC_TESTBED=reuse, ...) are no service settings:
      // a service refuses unknown ones.
      env: { ...withoutOffsetsyncVariables(process.env), ...options.env },
    });
  } finally {
    closeSync(fd);
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start the ${role}`);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const service: ServiceProcess = {
    role,
    pid,
    logFile,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    log: () => readFile(logFile, 'utf8'),
  };
  onTestFinished(async () => {
    await service.stop();
  });
  return service;
}

function withoutOffsetsyncVariables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('OFFSETSYNC_')));
}
