// `steady`: offsetsync alone at 1,000 commits/s over 10,000 group partitions, for three minutes by default:
// sync latency, bootstrap of the 10,000, peak RSS and CPU per service. `npm run -s bench:e2e` runs it
// too. The workload (bench/support/e2e-run.ts) runs in this process; progress goes to stderr and the
// result is the last line on stdout.
import { parseArgs } from 'node:util';
import { Cleanup, stopOnSignals } from '@offsetsync/harness';
import { e2eSettingsFrom, runE2e, type E2eOutcome, type E2eSettings } from '../support/e2e-run.js';

const HELP = `Usage: npm run -s bench -- --scenario steady [--seconds <n>]
       npm run -s bench:e2e [-- --seconds <n>]

  --seconds <n>   how long commits are sent at the rate, after the bootstrap (default 180; BENCH_SECONDS
                  when set)

See bench/README.md, "End to end". These environment variables apply:
BENCH_RATE (default 1000), BENCH_COALESCE_MS (default 20), BENCH_STAGES (0 turns the per-stage breakdown
off), BENCH_SOURCE_CONNECTIONS (default 4), BENCH_PROFILE=1 (CPU profiles of the services),
BENCH_NODE_ARGS (Node.js options of the services), OFFSETSYNC_TESTBED=reuse (the test bed of
\`npm run infra -- up\`).
`;

/** "A few minutes" of steady load. */
const DEFAULT_SECONDS = '180';

function say(line: string): void {
  process.stderr.write(`steady: ${line}\n`);
}

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
  let settings: E2eSettings;
  try {
    settings = e2eSettingsFrom(process.env, Number(seconds));
  } catch (error: unknown) {
    process.stderr.write(`${(error as Error).message}\n${HELP}`);
    return 2;
  }

  const cleanup = new Cleanup(say);
  const interrupted = stopOnSignals(cleanup, say);
  let outcome: E2eOutcome | undefined;
  try {
    outcome = await runE2e(settings, { cleanup, interrupted, say });
  } catch (error: unknown) {
    if (!interrupted()) say(error instanceof Error ? (error.stack ?? error.message) : String(error));
  } finally {
    await cleanup.run();
  }
  if (outcome === undefined) return 1;
  // Printed after the cleanup, so that it is the last line.
  process.stdout.write(
    `${JSON.stringify({ bench: 'steady', ...outcome.result, measured_by: 'bench/scenarios/steady.ts' })}\n`,
  );
  return outcome.code;
}
