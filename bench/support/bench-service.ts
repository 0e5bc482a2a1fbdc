// The benchmarks' offsetsync service processes: the harness's runner with the Node.js options of
// BENCH_NODE_ARGS, read here once so that every benchmark gets them.
import { spawnService, type Role, type ServiceProcess } from '@offsetsync/harness';

/** Node.js options for every benchmark service, from `BENCH_NODE_ARGS` (space separated), e.g. `--cpu-prof`. */
function nodeArgsFromEnvironment(): string[] {
  return (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
}

/**
 * Starts `node [BENCH_NODE_ARGS] [nodeArgs] services/<role>/dist/main.js --config <file>` with `config`
 * written as YAML into a fresh temporary folder; the caller stops it. `npm run build` must have run.
 */
export function startBenchService(
  role: Role,
  config: Record<string, unknown>,
  options: { nodeArgs?: readonly string[] } = {},
): Promise<ServiceProcess> {
  return spawnService(role, config, {
    nodeArgs: [...nodeArgsFromEnvironment(), ...(options.nodeArgs ?? [])],
  });
}
