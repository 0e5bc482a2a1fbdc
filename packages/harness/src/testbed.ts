// The servers a test run or a benchmark runs against: the test bed that `npm run infra -- up` started
// (with OFFSETSYNC_TESTBED=reuse), or a fresh one of its own that it always stops.
import {
  isAlive,
  readTestbedFile,
  startTestbed,
  stopTestbed,
  testbedStateFile,
  type SecureTestbedOptions,
  type TestbedInfo,
} from '@offsetsync/testbed';

export interface AcquiredTestbed {
  info: TestbedInfo;
  /** True when this run started the servers (and so must stop them). */
  owned: boolean;
}

/**
 * Reuses the running test bed when `OFFSETSYNC_TESTBED=reuse`, otherwise starts one (secured with
 * `secure`). A reused bed must be secured exactly when `secure` is given, and hold every cluster of
 * `clusters`: plaintext clients against a secured bed (or the reverse), or a cluster missing, would fail
 * far from the cause. A test bed that fails to start stops whatever of it did start.
 */
export async function acquireTestbed(options: {
  log: (line: string) => void;
  env?: NodeJS.ProcessEnv;
  secure?: SecureTestbedOptions;
  /** The Kafka clusters by name, as `startTestbed` takes them. Default: its default, source and target. */
  clusters?: readonly string[];
}): Promise<AcquiredTestbed> {
  const env = options.env ?? process.env;
  if (env.OFFSETSYNC_TESTBED === 'reuse') {
    const file = testbedStateFile(env);
    const info = await readTestbedFile(file);
    if (info === undefined)
      throw new Error(`OFFSETSYNC_TESTBED=reuse but ${file} does not exist: run 'npm run infra -- up'`);
    const dead = [info.source, info.target, info.nats].filter((server) => !isAlive(server.pid));
    if (dead.length > 0)
      throw new Error(
        `OFFSETSYNC_TESTBED=reuse but the test bed in ${file} is down: run 'npm run infra -- down' and 'up'`,
      );
    const wanted = options.secure === undefined ? 'plaintext' : 'secured';
    const running = info.security === undefined ? 'plaintext' : 'secured';
    if (wanted !== running)
      throw new Error(
        `OFFSETSYNC_TESTBED=reuse but the test bed in ${file} is ${running} and this run needs a ${wanted} one: run 'npm run infra -- down' and 'up'${wanted === 'secured' ? ' --secure' : ''}`,
      );
    const missing = (options.clusters ?? []).filter((name) => info.clusters[name] === undefined);
    if (missing.length > 0)
      throw new Error(
        `OFFSETSYNC_TESTBED=reuse but the test bed in ${file} has no cluster ${missing.join(', ')}: run this without OFFSETSYNC_TESTBED=reuse`,
      );
    options.log(`reusing the test bed from ${file}`);
    return { info, owned: false };
  }
  const info = await startTestbed({
    log: options.log,
    ...(options.secure === undefined ? {} : { secure: options.secure }),
    ...(options.clusters === undefined ? {} : { clusters: options.clusters }),
  });
  return { info, owned: true };
}

/** Stops an owned test bed (keeping its logs when `keepLogs`); leaves a reused one running. */
export async function releaseTestbed(
  testbed: AcquiredTestbed,
  options: { keepLogs: boolean },
): Promise<string | undefined> {
  if (!testbed.owned) return undefined;
  return stopTestbed(testbed.info, { keepLogs: options.keepLogs });
}
