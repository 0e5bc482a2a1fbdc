// Lays out what one stage of deploy/Dockerfile holds under its WORKDIR, without a container engine, by
// playing the Dockerfile's own instructions: COPY from the build context (minus what the .dockerignore
// leaves out) or from another stage, RUN as a shell command in the stage's folder, the rest recorded.
// test/integration/production-image.test.ts lays out the runtime stage this way, so the image the test
// checks is the one the Dockerfile describes: a COPY or RUN changed there changes what the test sees, and
// an instruction this player does not know fails it rather than being skipped.
//
//   npx tsx scripts/dockerfile-stage.ts <dir> [stage]    (after `npm run build`; default stage: the last)
//
// What a container build would do differently: the base image's own files are not laid out (only the
// stage's WORKDIR is), stages given in `builtStages` are taken as built in a folder (the `build` stage is
// the checkout after `npm run build`), and files keep the owner of whoever plays the stage.
import { spawn } from 'node:child_process';
import { cp, lstat, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, posix, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The Dockerfile of the image and its build context. */
export const DOCKERFILE = join(ROOT, 'deploy/Dockerfile');

/** One instruction, its continuation lines joined. */
export interface DockerInstruction {
  keyword: string;
  args: string;
  /** Line of the Dockerfile it starts on (1-based). */
  line: number;
}

/** One stage: `FROM <base> [AS <name>]` and what follows it up to the next FROM. */
export interface DockerStage {
  name: string | undefined;
  base: string;
  instructions: DockerInstruction[];
}

/** What a laid-out stage runs with: its recorded metadata. */
export interface StageRuntime {
  /** The WORKDIR, as in the image (`/app`). */
  workdir: string;
  /** `USER` as written (`1000:1000`); undefined when the stage never sets one (root). */
  user: string | undefined;
  env: Record<string, string>;
  /** ENTRYPOINT and CMD in exec form. */
  entrypoint: string[];
  cmd: string[];
}

/** Parses a Dockerfile into its stages. Comments and parser directives are dropped. */
export function parseDockerfile(text: string): { args: Record<string, string>; stages: DockerStage[] } {
  const args: Record<string, string> = {};
  const stages: DockerStage[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const start = i;
    let line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    while (line.endsWith('\\') && i + 1 < lines.length) {
      const next = lines[++i]!.trim();
      line = `${line.slice(0, -1).trimEnd()} ${next.startsWith('#') ? '' : next}`.trimEnd();
    }
    const match = /^(\S+)\s*(.*)$/.exec(line)!;
    const keyword = match[1]!.toUpperCase();
    const rest = match[2]!;
    if (keyword === 'FROM') {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest);
      if (from === null) throw new Error(`Dockerfile line ${start + 1}: cannot read FROM ${rest}`);
      stages.push({ base: substitute(from[1]!, args), name: from[2], instructions: [] });
    } else if (stages.length === 0) {
      if (keyword !== 'ARG')
        throw new Error(`Dockerfile line ${start + 1}: ${keyword} before the first FROM`);
      const [name, value = ''] = rest.split('=', 2);
      args[name!] = value;
    } else {
      stages.at(-1)!.instructions.push({ keyword, args: rest, line: start + 1 });
    }
  }
  return { args, stages };
}

function substitute(text: string, args: Record<string, string>): string {
  return text.replace(
    /\$\{(\w+)\}|\$(\w+)/g,
    (_, braced?: string, bare?: string) => args[braced ?? bare!] ?? '',
  );
}

/** Whether `path` (relative to the context, `/`-separated) is left out by the .dockerignore patterns. */
function isIgnored(path: string, patterns: readonly string[]): boolean {
  let ignored = false;
  for (const raw of patterns) {
    const negated = raw.startsWith('!');
    const pattern = posix.normalize(negated ? raw.slice(1) : raw).replace(/^\/+/, '');
    const regex = new RegExp(
      `^${pattern
        .split('/')
        .map((part) =>
          part === '**'
            ? '.*'
            : part
                .replace(/[.+^${}()|[\]\\]/g, '\\$&')
                .replace(/\*/g, '[^/]*')
                .replace(/\?/g, '[^/]'),
        )
        .join('/')
        .replace(/^\.\*\//, '(?:.*/)?')}(?:/.*)?$`,
    );
    if (regex.test(path)) ignored = !negated;
  }
  return ignored;
}

async function readIgnorePatterns(dockerfile: string): Promise<string[]> {
  // BuildKit reads <Dockerfile>.dockerignore next to the Dockerfile first.
  const text = await readFile(`${dockerfile}.dockerignore`, 'utf8').catch(() => '');
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** Options of {@link layOutStage}. */
export interface LayOutOptions {
  /** Default: deploy/Dockerfile. Its build context is the repository root. */
  dockerfile?: string;
  context?: string;
  /** The stage to lay out, by name; default: the last one (the image). */
  stage?: string;
  /** An empty folder that becomes the stage's WORKDIR. */
  dir: string;
  /**
   * Stages taken as already built, each by the folder that holds its WORKDIR. Default: `build` is the
   * repository root (after `npm run build`).
   */
  builtStages?: Record<string, string>;
  /** The environment of RUN commands. Default: this process's. */
  env?: NodeJS.ProcessEnv;
  /** Told of each instruction as it is played. */
  log?: (line: string) => void;
}

/** Lays out the stage's WORKDIR in `options.dir` and returns what the stage runs with. */
export async function layOutStage(options: LayOutOptions): Promise<StageRuntime> {
  const dockerfile = options.dockerfile ?? DOCKERFILE;
  const context = options.context ?? ROOT;
  const { stages } = parseDockerfile(await readFile(dockerfile, 'utf8'));
  const ignore = await readIgnorePatterns(dockerfile);
  const built = options.builtStages ?? { build: ROOT };
  const scratch = await mkdtemp(join(tmpdir(), 'offsetsync-dockerfile-'));
  /** Stages played for a `COPY --from`: the folder holding each one's WORKDIR, and its WORKDIR. */
  const played = new Map<string, { root: string; workdir: string }>();
  for (const [name, root] of Object.entries(built)) played.set(name, { root, workdir: workdirOf(name) });

  function workdirOf(name: string): string {
    for (let stage = stages.find((s) => s.name === name); stage !== undefined;) {
      const workdir = stage.instructions.findLast((i) => i.keyword === 'WORKDIR');
      if (workdir !== undefined) return workdir.args;
      const base = stage.base;
      stage = stages.find((s) => s.name === base);
    }
    return '/';
  }

  async function play(stage: DockerStage, dir: string): Promise<StageRuntime> {
    const base = stages.find((s) => s.name === stage.base);
    const runtime: StageRuntime =
      base === undefined
        ? { workdir: '/', user: undefined, env: {}, entrypoint: [], cmd: [] }
        : await play(base, dir);
    for (const instruction of stage.instructions) {
      options.log?.(`${stage.name ?? '(image)'}: ${instruction.keyword} ${instruction.args}`);
      await playInstruction(instruction, runtime, dir);
    }
    return runtime;
  }

  async function playInstruction(
    { keyword, args, line }: DockerInstruction,
    runtime: StageRuntime,
    dir: string,
  ): Promise<void> {
    const where = `Dockerfile line ${line}`;
    switch (keyword) {
      case 'WORKDIR':
        if (runtime.workdir !== '/' && runtime.workdir !== args)
          throw new Error(`${where}: a second WORKDIR (${args}) is not played`);
        runtime.workdir = args;
        return;
      case 'ENV': {
        const [name, ...value] = args.split('=');
        runtime.env[name!] = value.join('=');
        return;
      }
      case 'USER':
        runtime.user = args;
        return;
      case 'ENTRYPOINT':
        runtime.entrypoint = JSON.parse(args) as string[];
        return;
      case 'CMD':
        runtime.cmd = JSON.parse(args) as string[];
        return;
      case 'ARG':
      case 'EXPOSE':
      case 'LABEL':
        return;
      case 'RUN':
        // The player runs commands as whoever plays the stage; after USER that would not be the image's user.
        if (runtime.user !== undefined) throw new Error(`${where}: RUN after USER is not played`);
        await run(args, dir, options.env ?? process.env, where);
        return;
      case 'COPY':
        await copy(args, runtime, dir, where);
        return;
      default:
        throw new Error(`${where}: ${keyword} is not played by scripts/dockerfile-stage.ts`);
    }
  }

  async function copy(args: string, runtime: StageRuntime, dir: string, where: string): Promise<void> {
    const words = args.split(/\s+/);
    const flags = words.filter((w) => w.startsWith('--'));
    const paths = words.filter((w) => !w.startsWith('--'));
    const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length);
    if (flags.some((f) => !f.startsWith('--from=')) || paths.length < 2)
      throw new Error(`${where}: cannot play COPY ${args}`);
    const dest = paths.pop()!;
    const target = inWorkdir(runtime.workdir, dest, dir, where);
    const source = from === undefined ? undefined : await stageFolder(from, where);
    for (const path of paths) {
      const file =
        source === undefined ? join(context, path) : inWorkdir(source.workdir, path, source.root, where);
      // A folder's content goes into the destination, a file into it when it ends in `/`.
      const folder = (await lstat(file)).isDirectory();
      const destination = folder || !dest.endsWith('/') ? target : join(target, posix.basename(path));
      await mkdir(folder ? destination : dirname(destination), { recursive: true });
      await cp(file, destination, {
        recursive: true,
        // Workspace links in node_modules stay links, as COPY keeps them.
        verbatimSymlinks: true,
        filter: (f) => source !== undefined || !isIgnored(relative(context, f), ignore),
      });
    }
  }

  async function stageFolder(name: string, where: string): Promise<{ root: string; workdir: string }> {
    const known = played.get(name);
    if (known !== undefined) return known;
    const stage = stages.find((s) => s.name === name);
    if (stage === undefined) throw new Error(`${where}: no stage ${name}`);
    const root = join(scratch, name);
    await mkdir(root, { recursive: true });
    const folder = { root, workdir: (await play(stage, root)).workdir };
    played.set(name, folder);
    return folder;
  }

  try {
    const target = options.stage === undefined ? stages.at(-1) : stages.find((s) => s.name === options.stage);
    if (target === undefined) throw new Error(`no stage ${options.stage ?? ''} in ${dockerfile}`);
    return await play(target, options.dir);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Where an image path under the WORKDIR lies in the folder that holds the WORKDIR. */
function inWorkdir(workdir: string, path: string, dir: string, where: string): string {
  const absolute = posix.resolve(workdir, path);
  const inside = posix.relative(workdir, absolute);
  if (inside.startsWith('..')) throw new Error(`${where}: ${path} lies outside the WORKDIR ${workdir}`);
  return join(dir, inside);
}

async function run(command: string, cwd: string, env: NodeJS.ProcessEnv, where: string): Promise<void> {
  const code = await new Promise<number | null>((resolveExit, reject) => {
    const child = spawn('/bin/sh', ['-c', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (exit) => {
      if (exit !== 0) process.stderr.write(output);
      resolveExit(exit);
    });
  });
  if (code !== 0) throw new Error(`${where}: RUN ${command} exited with ${code}`);
}

/** Every file and link under `dir`, relative to it, `/`-separated. */
export async function listFiles(dir: string, under = ''): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(join(dir, under), { withFileTypes: true })) {
    const path = under === '' ? entry.name : `${under}/${entry.name}`;
    if (entry.isDirectory()) files.push(path, ...(await listFiles(dir, path)));
    else files.push(path);
  }
  return files;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [dir, stage] = process.argv.slice(2);
  if (dir === undefined) {
    console.error('usage: npx tsx scripts/dockerfile-stage.ts <empty dir> [stage]');
    process.exit(2);
  }
  await mkdir(dir, { recursive: true });
  const runtime = await layOutStage({
    dir: resolve(dir),
    ...(stage === undefined ? {} : { stage }),
    log: console.log,
  });
  console.log(JSON.stringify(runtime, null, 2));
}
