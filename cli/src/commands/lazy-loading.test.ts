// Guards the lazy loading of the commands: `offsetsync --help` and `offsetsync <command> --help` load no
// command module, and running one command loads neither another service nor the sandbox with its
// launcher of real servers (@offsetsync/testbed, which the container image leaves out). Runs the CLI from
// source in a child process whose module loader records every module it loads.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const MAIN = join(ROOT, 'cli', 'src', 'main.ts');

/** A module hook that appends the URL of every module loaded to the file in LOADED_MODULES. */
const HOOKS = `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(process.env.LOADED_MODULES, url + '\\n');
  return next(url, context);
}
`;
const REGISTER = `import { register } from 'node:module';
register('./hooks.mjs', import.meta.url);
`;

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'offsetsync-cli-loading-'));
  await writeFile(join(dir, 'hooks.mjs'), HOOKS);
  await writeFile(join(dir, 'register.mjs'), REGISTER);
  return () => rm(dir, { recursive: true, force: true });
});

/** Runs `offsetsync ...argv` from source; resolves to its exit code and the modules it loaded. */
async function run(argv: string[]): Promise<{ code: number; modules: string[] }> {
  const log = join(dir, `loaded-${argv.join('_').replace(/\W/g, '')}-${process.hrtime.bigint()}.txt`);
  await writeFile(log, '');
  onTestFinished(() => rm(log, { force: true }));
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('OFFSETSYNC_')),
  );
  let code = 0;
  try {
    await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--import', join(dir, 'register.mjs'), MAIN, ...argv],
      { cwd: ROOT, env: { ...env, LOADED_MODULES: log }, timeout: 60_000 },
    );
  } catch (error: unknown) {
    code = (error as { code?: number }).code ?? -1;
  }
  const modules = (await readFile(log, 'utf8')).split('\n').filter((line) => line !== '');
  return { code, modules };
}

/** The modules of one part of the repository (`services/collector/`, `cli/src/commands/status`, ...). */
function from(modules: readonly string[], part: string): string[] {
  return modules.filter((url) => url.includes(`/${part}`));
}

describe('offsetsync loads a command only when it runs', () => {
  it('lists the commands and prints a command help without loading any command', async () => {
    for (const argv of [['--help'], ['collector', '--help'], ['status', '--help'], ['sandbox', '--help']]) {
      const { code, modules } = await run(argv);
      expect(code, argv.join(' ')).toBe(0);
      expect(modules.some((url) => url.endsWith('/cli/src/main.ts'))).toBe(true);
      // @offsetsync/contracts (the error codes of a usage error) is all the CLI loads of the workspace.
      for (const part of [
        'services/',
        'packages/runtime/',
        'packages/kafka/',
        'packages/testbed/',
        'opentelemetry/sdk',
      ]) {
        expect(from(modules, part), `${argv.join(' ')}: ${part}`).toEqual([]);
      }
      for (const command of ['status.ts', 'cutover.ts', 'sandbox.ts']) {
        expect(from(modules, `cli/src/commands/${command}`), argv.join(' ')).toEqual([]);
      }
    }
  }, 120_000);

  it('runs the collector without the other services, the sandbox or the launcher', async () => {
    // Without a config file the collector stops at start with exit code 2, after loading what it runs.
    const { code, modules } = await run(['collector', '--config', join(dir, 'missing.yaml')]);
    expect(code).toBe(2);
    expect(from(modules, 'services/collector/').length).toBeGreaterThan(0);
    for (const part of [
      'services/translator/',
      'services/committer/',
      'services/health/',
      'packages/testbed/',
    ]) {
      expect(from(modules, part), part).toEqual([]);
    }
    expect(from(modules, 'cli/src/sandbox/')).toEqual([]);
    expect(from(modules, 'cli/src/commands/sandbox.ts')).toEqual([]);
  }, 120_000);
});
