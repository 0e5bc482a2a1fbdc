// Runs the built `offsetsync` command line as a user would, without the test run's OFFSETSYNC_*
// variables (the CLI would read them as config overrides).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '../infra/testbed.js';

const CLI = join(REPO_ROOT, 'cli', 'bin', 'offsetsync.js');

/** How a CLI run ended. */
export interface CliRun {
  /** The exit code; null when it was killed (see `timeoutMs`). */
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `offsetsync <args>`; kills it after `timeoutMs` (default 90 s). Never rejects on an exit code. */
export function runCli(args: readonly string[], options: { timeoutMs?: number } = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      {
        timeout: options.timeoutMs ?? 90_000,
        env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OFFSETSYNC_'))),
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
