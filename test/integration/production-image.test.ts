// What the container image's runtime stage holds and runs, without a container engine: the stage is laid
// out by playing deploy/Dockerfile's own instructions (scripts/dockerfile-stage.ts: its COPY lines, and its
// RUN `npm ci --omit=dev` against package-lock.json followed by the removal of the development-only
// workspaces), then the entrypoint runs there as the image's user. Needs `npm run build` (the build stage
// is the checkout's dist/ folders) and the npm registry.
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  DOCKERFILE,
  layOutStage,
  listFiles,
  parseDockerfile,
  type StageRuntime,
} from '../../scripts/dockerfile-stage.js';
import { REPO_ROOT } from '../infra/testbed.js';

const SERVICES = ['collector', 'translator', 'committer', 'health'] as const;
/** The image's user (the node image's `node`), by number. */
const IMAGE_UID = 1000;

let dir: string;
let image: StageRuntime;
let files: string[];

beforeAll(async () => {
  const root = await mkdtemp(join(tmpdir(), 'offsetsync-image-'));
  // The image's user must reach /app as it would in the image, where / is not private to root.
  await chmod(root, 0o755);
  dir = join(root, 'app');
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('OFFSETSYNC_') && name !== 'NODE_ENV'),
  );
  image = await layOutStage({ dir, env });
  files = await listFiles(dir);
  return () => rm(root, { recursive: true, force: true });
}, 180_000);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the image's ENTRYPOINT with `args` in the laid-out WORKDIR, with the image's environment only and
 * as the image's user when this process may switch to it (running as root): then /app is root's and
 * read-only to the service, as in the image.
 */
function entrypoint(args: readonly string[]): Promise<Run> {
  const [command, ...entryArgs] = image.entrypoint;
  const asImageUser = process.getuid?.() === 0;
  return new Promise((resolve, reject) => {
    const child = spawn(command === 'node' ? process.execPath : command!, [...entryArgs, ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: '/nonexistent', ...image.env },
      ...(asImageUser ? { uid: IMAGE_UID, gid: IMAGE_UID } : {}),
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the production image', () => {
  it('runs as the unprivileged user by number, and runs nothing as root after it is set', async () => {
    // A numeric USER lets Kubernetes' runAsNonRoot verify it without looking the name up.
    expect(image.user).toMatch(new RegExp(`^${IMAGE_UID}(:${IMAGE_UID})?$`));
    const { stages } = parseDockerfile(await readFile(DOCKERFILE, 'utf8'));
    const runtime = stages.at(-1)!;
    const user = runtime.instructions.findIndex((i) => i.keyword === 'USER');
    expect(runtime.instructions.slice(user).filter((i) => i.keyword === 'RUN')).toEqual([]);
    expect(image.entrypoint).toEqual(['node', 'cli/bin/offsetsync.js']);
  });

  it('starts offsetsync --help and every service --help', async () => {
    const top = await entrypoint(['--help']);
    expect(top.code, top.stderr).toBe(0);
    for (const service of SERVICES) {
      expect(top.stdout).toContain(service);
      const help = await entrypoint([service, '--help']);
      expect(help.code, `${service} --help: ${help.stderr}`).toBe(0);
      expect(help.stdout).toContain(`offsetsync ${service} --config <file>`);
    }
  }, 120_000);

  it("loads every service's modules from the production dependencies alone", async () => {
    // --help loads no service (the CLI loads a command's module when it runs). Run each one up to its
    // config check: a missing module would end it with 1 before, a missing config file ends it with 2.
    for (const service of SERVICES) {
      const run = await entrypoint([service, '--config', '/nonexistent/offsetsync.yaml']);
      expect(run.stderr, service).not.toContain('ERR_MODULE_NOT_FOUND');
      expect(run.stderr, service).toContain('invalid configuration');
      expect(run.code, `${service}: ${run.stderr}`).toBe(2);
    }
    // The development-only sandbox says where it runs instead of failing on its missing launcher.
    const sandbox = await entrypoint(['sandbox']);
    expect(sandbox.code).toBe(1);
    expect(sandbox.stderr).toContain('runs from a clone of the repository');
  }, 120_000);

  it('holds no test, benchmark or launcher code and no development dependency', async () => {
    expect(files.length).toBeGreaterThan(100);
    const forbidden = [
      /^test\//,
      /^bench\//,
      /^scripts\//,
      /^packages\/(testbed|harness)(\/|$)/,
      /^node_modules\/@offsetsync\/(testbed|harness)$/,
      // Sources: the image runs the build.
      /^(packages|services)\/[^/]+\/src\//,
      /^cli\/src\//,
      // Tests of this repository (the packages in node_modules bring their own, which they publish).
      /^(?!node_modules\/).*\.test\.[cm]?[jt]s$/,
      /^(?!node_modules\/).*vitest\.config\./,
    ];
    expect(files.filter((file) => forbidden.some((pattern) => pattern.test(file)))).toEqual([]);

    // npm marks every package that only development dependencies need `dev` in the lock file (vitest,
    // typescript, eslint, tsx, ... and what they pull in).
    const lock = JSON.parse(await readFile(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean }>;
    };
    const devOnly = Object.entries(lock.packages)
      .filter(([path, entry]) => entry.dev === true && path.startsWith('node_modules/'))
      .map(([path]) => path);
    expect(devOnly).toEqual(expect.arrayContaining(['node_modules/vitest', 'node_modules/typescript']));
    const present = new Set(files);
    expect(devOnly.filter((path) => present.has(path))).toEqual([]);

    // Only the sandbox command's modules (cli/dist/sandbox/, loaded when it runs, see above) import the
    // launcher.
    const mentions: string[] = [];
    for (const file of files.filter((f) => /^(packages|services|cli)\/.*\.js$/.test(f))) {
      const text = await readFile(join(dir, file), 'utf8');
      if (/(from\s*|import\(\s*)['"]@offsetsync\/(testbed|harness)['"]/.test(text)) mentions.push(file);
    }
    expect(mentions).toContain('cli/dist/sandbox/sandbox.js');
    expect(mentions.filter((file) => !file.startsWith('cli/dist/sandbox/'))).toEqual([]);
  });
});
