// `steady`: offsetsync alone at 1,000 commits/s over 10,000 group partitions, for three minutes by default.
// bench/e2e.ts already measures exactly that (sync latency, bootstrap of the 10,000, peak RSS and CPU per
// service); this runs it as it is, sends its progress to stderr, and prints its result line as the
// scenario's last line.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from '@offsetsync/testbed';

const HELP = `Usage: npm run -s bench -- --scenario steady [--seconds <n>]

  --seconds <n>   how long commits are sent at the rate, after the bootstrap (default 180; BENCH_SECONDS
                  when set)

Runs bench/e2e.ts (see bench/README.md, "End to end"). Its environment variables apply:
BENCH_RATE (default 1000), BENCH_COALESCE_MS, BENCH_STAGES, BENCH_SOURCE_CONNECTIONS.
`;

/** "A few minutes" of steady load; bench:e2e on its own defaults to one. */
const DEFAULT_SECONDS = '180';

export async function runSteady(args: readonly string[]): Promise<number> {
  let values: { help?: boolean; seconds?: string };
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: { help: { type: 'boolean' }, seconds: { type: 'string' } },
    }));
  } catch (error: unknown) {
    process.stderr.write(`${(error as Error).message}\n${HELP}`);
    return 2;
  }
  if (values.help === true) {
    process.stdout.write(HELP);
    return 0;
  }
  const seconds = values.seconds ?? process.env.BENCH_SECONDS ?? DEFAULT_SECONDS;
  if (!(Number(seconds) > 0)) {
    process.stderr.write(`--seconds must be a number above 0: ${seconds}\n${HELP}`);
    return 2;
  }
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'bench', 'e2e.ts')], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, BENCH_SECONDS: seconds },
  });
  // Ctrl-C reaches the child through the terminal's process group; it cleans up by itself.
  let last: string | undefined;
  const lines = createInterface({ input: child.stdout });
  lines.on('line', (line) => {
    if (line.startsWith('{')) last = line;
    else process.stderr.write(`steady: ${line}\n`);
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (last === undefined) {
    process.stderr.write(`steady: bench/e2e.ts ended (code ${String(code)}) without a result line\n`);
    return code === 0 || code === null ? 1 : code;
  }
  const result = JSON.parse(last) as Record<string, unknown>;
  process.stdout.write(`${JSON.stringify({ ...result, bench: 'steady', measured_by: 'bench/e2e.ts' })}\n`);
  return code ?? 1;
}
