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

/**
 * Stops a process by pid: SIGTERM, then SIGKILL once `graceMs` has passed. Resolves when it is gone.
 * `signal: 'SIGKILL'` skips the polite part (tests use it to simulate a crash).
 */
export async function stopProcess(
  pid: number,
  options: { graceMs?: number; signal?: NodeJS.Signals } = {},
): Promise<void> {
  if (!isAlive(pid)) return;
  const graceMs = options.graceMs ?? 15_000;
  try {
    process.kill(pid, options.signal ?? 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        return;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
