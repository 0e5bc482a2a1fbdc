import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Apache Kafka release the test bed and the sandbox run. Bump here and nowhere else. */
export const KAFKA_VERSION = '4.1.1';

// The pom sits beside src/ and dist/, so the same path works from the sources (tsx, vitest) and the build.
const POM = fileURLToPath(new URL('../kafka-pom.xml', import.meta.url));
const COMPLETE_MARKER = '.complete';

/** Where jars are cached between runs: `$OFFSETSYNC_INFRA_CACHE`, else `$XDG_CACHE_HOME/offsetsync`, else `~/.cache/offsetsync`. */
function infraCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.OFFSETSYNC_INFRA_CACHE) return env.OFFSETSYNC_INFRA_CACHE;
  return join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'offsetsync');
}

export interface KafkaDistribution {
  version: string;
  /** Folder holding every runtime jar; `<libDir>/*` is the Java classpath. */
  libDir: string;
  /** True when this call ran Maven; false when the cache already held the jars. */
  fetched: boolean;
}

/**
 * Makes sure the Kafka broker, tools and MirrorMaker 2 jars (and a log4j2 binding) are in the cache, running Maven only when
 * they are not. Maven resolves from its local repository first, so a machine that fetched once
 * downloads nothing again, even for a fresh cache folder.
 */
export async function ensureKafkaDistribution(
  options: { version?: string; cacheDir?: string; log?: (line: string) => void } = {},
): Promise<KafkaDistribution> {
  const version = options.version ?? KAFKA_VERSION;
  // The folder is named after the pom's content too: a jar added to the pom gets a fresh folder
  // instead of a complete-looking one that lacks it.
  const libDir = join(
    options.cacheDir ?? infraCacheDir(),
    `kafka-${version}-${await pomFingerprint()}`,
    'libs',
  );
  if (existsSync(join(libDir, COMPLETE_MARKER))) return { version, libDir, fetched: false };

  options.log?.(`fetching Apache Kafka ${version} jars with Maven into ${libDir}`);
  await rm(libDir, { recursive: true, force: true });
  await mkdir(libDir, { recursive: true });
  await runMaven([
    '-q',
    '-B',
    '-f',
    POM,
    `-Dkafka.version=${version}`,
    'dependency:copy-dependencies',
    `-DoutputDirectory=${libDir}`,
    '-DincludeScope=runtime',
  ]);
  const jars = (await readdir(libDir)).filter((name) => name.endsWith('.jar'));
  for (const expected of [`kafka_2.13-${version}`, `connect-mirror-${version}`]) {
    if (!jars.some((name) => name.startsWith(expected))) {
      throw new Error(`Maven finished but ${libDir} holds no ${expected} jar`);
    }
  }
  await writeFile(join(libDir, COMPLETE_MARKER), `${new Date().toISOString()} ${jars.length} jars\n`);
  return { version, libDir, fetched: true };
}

/** A short hash of the pom, so the cache key follows its dependency list. */
async function pomFingerprint(): Promise<string> {
  return createHash('sha256')
    .update(await readFile(POM))
    .digest('hex')
    .slice(0, 10);
}

async function runMaven(args: string[]): Promise<void> {
  const output: string[] = [];
  const child = spawn('mvn', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (code !== 0) {
    throw new Error(`mvn ${args.join(' ')} exited with ${code}:\n${output.join('').slice(-4000)}`);
  }
}
