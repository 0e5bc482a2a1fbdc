import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';

/** Starts a long-running server process detached from this one, its output appended to `logFile`. */
export function spawnDetached(
  command: string,
  args: string[],
  logFile: string,
  env?: NodeJS.ProcessEnv,
): number {
  const fd = openSync(logFile, 'a');
  try {
    const child = spawn(command, args, {
      detached: true,
      stdio: ['ignore', fd, fd],
      env: env ?? process.env,
    });
    if (child.pid === undefined) throw new Error(`could not start ${command}`);
    child.unref();
    return child.pid;
  } finally {
    closeSync(fd);
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error: unknown) {
    // EPERM means it exists but belongs to someone else: still alive.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True while any process of the process group `pgid` exists (a detached child leads its own group). */
export function isGroupAlive(pgid: number): boolean {
  return isAlive(-pgid);
}

/**
 * Stops a process by pid: SIGTERM, then SIGKILL once `graceMs` has passed. Resolves when it is gone.
 * `signal: 'SIGKILL'` skips the polite part (tests use it to simulate a crash). With `group: true` the
 * signals go to the process group the pid leads (every process {@link spawnDetached} started leads one),
 * and it resolves when no process of the group is left, so nothing it forked outlives it.
 */
export async function stopProcess(
  pid: number,
  options: { graceMs?: number; signal?: NodeJS.Signals; group?: boolean } = {},
): Promise<void> {
  const target = options.group === true ? -pid : pid;
  if (!isAlive(target)) return;
  const graceMs = options.graceMs ?? 15_000;
  try {
    process.kill(target, options.signal ?? 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  let killed = false;
  while (isAlive(target)) {
    if (!killed && Date.now() > deadline) {
      killed = true;
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        return;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
