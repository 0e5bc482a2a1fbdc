// The benchmark dispatcher: `npm run -s bench -- --scenario <name>` (issue 7, offsetsync side by side with
// MirrorMaker 2). Every scenario starts and stops its own servers, prints progress on stderr and ends with
// one JSON line on stdout.
import { parseArgs } from 'node:util';

interface Scenario {
  summary: string;
  /** Loads the scenario's module only when it runs: each one pulls in clients and servers of its own. */
  run: (args: readonly string[]) => Promise<number>;
}

const SCENARIOS: Record<string, Scenario> = {
  bootstrap: {
    summary:
      'time until 100,000 group partitions committed on the source before the start are all on the target, offsetsync vs MirrorMaker 2 (tuned; defaults on request), same brokers and commits, one run',
    run: async (args) => (await import('./scenarios/bootstrap.js')).runBootstrap(args),
  },
  failover: {
    summary:
      'records replayed and skipped after moving a group to the target, offsetsync vs MirrorMaker 2 (defaults and tuned), with and without timestamp collisions, over several commit positions',
    run: async (args) => (await import('./scenarios/failover.js')).runFailover(args),
  },
  health: {
    summary:
      'the health service alone (nats-server, no Kafka): replay time, RSS and CPU with 1,000,000 group partitions known to it, at rest, under a trickle and as groups come and go; API latency',
    run: async (args) => (await import('./scenarios/health.js')).runHealth(args),
  },
  latency: {
    summary:
      'time from a source commit until the target shows it (p50, p99, max), offsetsync vs MirrorMaker 2 at its defaults and tuned to 1 s, same brokers and groups, one run',
    run: async (args) => (await import('./scenarios/latency.js')).runLatency(args),
  },
  steady: {
    summary:
      'offsetsync alone: 10,000 group partitions at 1,000 commits/s (also npm run -s bench:e2e): sync latency, peak RSS and CPU per service',
    run: async (args) => (await import('./scenarios/steady.js')).runSteady(args),
  },
};

const HELP = `Usage: npm run -s bench -- --scenario <name> [scenario options]

Scenarios:
${Object.entries(SCENARIOS)
  .map(([name, s]) => `  ${name.padEnd(10)} ${s.summary}`)
  .join('\n')}

Each scenario starts its own test bed (two Kafka clusters, nats-server; only nats-server for health) and
MirrorMaker 2 where it needs one, stops them at the end, prints progress on stderr and one JSON line last
on stdout.
Scenario options: npm run -s bench -- --scenario <name> --help
`;

async function main(argv: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...argv],
    options: { scenario: { type: 'string' }, help: { type: 'boolean' } },
    strict: false,
  });
  const name = typeof values.scenario === 'string' ? values.scenario : undefined;
  if (name === undefined) {
    process.stdout.write(HELP);
    return values.help === true ? 0 : 2;
  }
  const scenario = SCENARIOS[name];
  if (scenario === undefined) {
    process.stderr.write(`unknown scenario ${name}\n${HELP}`);
    return 2;
  }
  return scenario.run(withoutScenario(argv));
}

/** The arguments with `--scenario <name>` (or `--scenario=<name>`) taken out: the scenario's own options. */
function withoutScenario(argv: readonly string[]): string[] {
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--scenario') i += 1;
    else if (!arg.startsWith('--scenario=')) rest.push(arg);
  }
  return rest;
}

process.exitCode = await main(process.argv.slice(2));
