// Helm's own engine for the tests, without a helm binary: helm-java runs Helm's Go code (lint, template)
// as a native library from Java. The jars come from Maven into the same cache as the Kafka jars
// (`npm run infra -- fetch`); HelmRender.java, beside this file, drives them.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse, parseAllDocuments } from 'yaml';

const run = promisify(execFile);
const POM = fileURLToPath(new URL('./helm-java-pom.xml', import.meta.url));
const RENDER = fileURLToPath(new URL('./HelmRender.java', import.meta.url));
const COMPLETE_MARKER = '.complete';

/**
 * The cache folder of packages/testbed/src/kafka-dist.ts (`$OFFSETSYNC_INFRA_CACHE`, else
 * `$XDG_CACHE_HOME/offsetsync`, else `~/.cache/offsetsync`), so that CI keeps both in one place.
 */
function infraCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.OFFSETSYNC_INFRA_CACHE) return env.OFFSETSYNC_INFRA_CACHE;
  return join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'offsetsync');
}

interface HelmJava {
  /** Folder holding every jar; `<libDir>/*` is the Java classpath. */
  libDir: string;
  /** True when this call ran Maven; false when the cache already held the jars. */
  fetched: boolean;
}

/**
 * Makes sure the helm-java jars (with the linux-amd64 native library) are in the cache, running Maven
 * only when they are not. The folder is named after the pom's content, so a version bump gets a new one.
 */
export async function ensureHelmJava(options: { log?: (line: string) => void } = {}): Promise<HelmJava> {
  const fingerprint = createHash('sha256')
    .update(await readFile(POM))
    .digest('hex')
    .slice(0, 10);
  const libDir = join(infraCacheDir(), `helm-java-${fingerprint}`, 'libs');
  if (existsSync(join(libDir, COMPLETE_MARKER))) return { libDir, fetched: false };
  options.log?.(`fetching helm-java with Maven into ${libDir}`);
  await rm(libDir, { recursive: true, force: true });
  await mkdir(libDir, { recursive: true });
  const args = ['-q', '-B', '-f', POM, 'dependency:copy-dependencies', `-DoutputDirectory=${libDir}`];
  try {
    await run('mvn', [...args, '-DincludeScope=runtime'], { maxBuffer: 16 * 1024 * 1024 });
  } catch (error: unknown) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`mvn ${args.join(' ')} failed:\n${`${stdout}${stderr}`.slice(-4000)}`, { cause: error });
  }
  const jars = (await readdir(libDir)).filter((name) => name.endsWith('.jar'));
  for (const expected of ['helm-java-', 'linux-amd64-']) {
    if (!jars.some((name) => name.startsWith(expected)))
      throw new Error(`Maven finished but ${libDir} holds no ${expected}*.jar`);
  }
  await writeFile(join(libDir, COMPLETE_MARKER), `${new Date().toISOString()} ${jars.length} jars\n`);
  return { libDir, fetched: true };
}

type Tree = Record<string, unknown>;

/**
 * The oldest Kubernetes version the chart's `kubeVersion: '>=X.Y.Z-0'` admits, which the tests render for,
 * with the constraint itself: Helm checks it (helm-java's engine would otherwise report v1.20).
 */
export async function chartMinimumKubeVersion(
  chartDir: string,
): Promise<{ constraint: string; version: string }> {
  const chart = parse(await readFile(join(chartDir, 'Chart.yaml'), 'utf8')) as { kubeVersion?: unknown };
  const constraint = String(chart.kubeVersion);
  const version = /^>=(\d+\.\d+\.\d+)(-0)?$/.exec(constraint)?.[1];
  if (version === undefined)
    throw new Error(`${chartDir}/Chart.yaml: kubeVersion ${constraint} is not '>=X.Y.Z-0'`);
  return { constraint, version };
}

/** One document `helm template` printed, with the template it came from. */
interface RenderedManifest {
  /** The template path after `# Source: `, e.g. `offsetsync/templates/provision-job.yaml`. */
  source: string;
  /** True for a hook (annotation helm.sh/hook): Helm applies it around install/upgrade, not as a resource. */
  hook: boolean;
  object: Tree;
}

/** One `helm template`: a values file (`-` for the chart's defaults alone) for a Kubernetes version. */
interface RenderRequest {
  values: string;
  kubeVersion: string;
}

/** The outcome of one render request: Helm's error, or its manifests. */
type Render =
  | { values: string; error: string; manifests?: undefined }
  | { values: string; error?: undefined; manifests: RenderedManifest[] };

interface ChartRendering {
  /** `helm lint --strict` of the chart with its own values. */
  lint: { failed: boolean; messages: string[] };
  /** In the order of the requests. */
  renders: Render[];
}

// helm-java's template returns the release manifest only, without the hooks (`helm template` prints
// them too). So the chart is rendered from a copy in which this stands for the hook annotation key: Helm
// then keeps those documents in the manifest, and the key is put back in what is returned. Nothing else
// of the copy differs from the chart.
const HOOK_KEY = 'helm.sh/hook';
const HOOK_STAND_IN = 'offsetsync.test/helm-hook';

/**
 * Lints the chart (`helm lint --strict`, the chart itself: what is published is what is linted) and
 * renders it once per request (`helm template --kube-version <kubeVersion> -f <values>`), all in one JVM.
 */
export async function renderChart(options: {
  chartDir: string;
  renders: readonly RenderRequest[];
  releaseName?: string;
  namespace?: string;
  log?: (line: string) => void;
}): Promise<ChartRendering> {
  const { libDir } = await ensureHelmJava({ ...(options.log ? { log: options.log } : {}) });
  const scratch = await mkdtemp(join(tmpdir(), 'offsetsync-helm-'));
  try {
    const copy = join(scratch, 'chart');
    await cp(options.chartDir, copy, { recursive: true });
    const templates = join(copy, 'templates');
    for (const name of await readdir(templates)) {
      const file = join(templates, name);
      const text = await readFile(file, 'utf8');
      if (text.includes(HOOK_STAND_IN)) throw new Error(`${name} already uses ${HOOK_STAND_IN}`);
      if (text.includes(HOOK_KEY)) await writeFile(file, text.replaceAll(HOOK_KEY, HOOK_STAND_IN));
    }
    const { stdout } = await run(
      'java',
      [
        '-cp',
        join(libDir, '*'),
        RENDER,
        options.chartDir,
        copy,
        options.releaseName ?? 'offsetsync',
        options.namespace ?? 'offsetsync',
        ...options.renders.flatMap((render) => [render.kubeVersion, render.values]),
      ],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    const lines = stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Tree);
    const [lintLine, ...renderLines] = lines;
    const lint = lintLine?.lint as ChartRendering['lint'] | undefined;
    if (lint === undefined || renderLines.length !== options.renders.length)
      throw new Error(`HelmRender printed no lint result or not one line per render:\n${stdout}`);
    const renders = renderLines.map((line): Render => {
      const values = String(line.values);
      if (typeof line.error === 'string')
        return { values, error: line.error.replaceAll(HOOK_STAND_IN, HOOK_KEY) };
      return { values, manifests: parseManifests(String(line.manifest)) };
    });
    return { lint, renders };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

function parseManifests(text: string): RenderedManifest[] {
  // Helm starts every document with `---` and a `# Source: <template>` line.
  return text
    .replaceAll(HOOK_STAND_IN, HOOK_KEY)
    .split(/^---$/m)
    .flatMap((chunk) => {
      const source = /^# Source: (.+)$/m.exec(chunk)?.[1] ?? '';
      return parseAllDocuments(chunk).flatMap((doc) => {
        const object = doc.toJS() as unknown;
        if (object === null || typeof object !== 'object' || Array.isArray(object)) return [];
        const annotations = ((object as Tree).metadata as Tree | undefined)?.annotations as Tree | undefined;
        return [{ source, hook: annotations?.[HOOK_KEY] !== undefined, object: object as Tree }];
      });
    });
}
