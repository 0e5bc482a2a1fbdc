// What the harness starts inside a vitest test, stopped when that test finishes (pass or fail), so a
// test registers no cleanup of its own. Outside a test (a benchmark, a script) use `spawnService` and
// `new TestReplicator` and stop them yourself.
import { onTestFinished } from 'vitest';
import { TestReplicator, type ReplicatorOptions } from './replicator.js';
import { spawnService, type Role, type ServiceProcess, type SpawnServiceOptions } from './service-process.js';

/** Starts a service process that is stopped when the current test finishes, unless the test already did. */
export async function startService(
  role: Role,
  config: unknown,
  options: SpawnServiceOptions = {},
): Promise<ServiceProcess> {
  const service = await spawnService(role, config, options);
  onTestFinished(async () => {
    await service.stop();
  });
  return service;
}

/** Starts a replicator that is stopped when the current test finishes. */
export async function startReplicator(options: ReplicatorOptions): Promise<TestReplicator> {
  const replicator = new TestReplicator(options);
  onTestFinished(() => replicator.stop());
  await replicator.start();
  return replicator;
}
