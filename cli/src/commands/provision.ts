// `offsetsync provision`: creates or corrects the deployment's JetStream streams, KV bucket and durable
// consumers, with the admin rights no long-running service holds.
import { parseArgs } from 'node:util';
import { ConfigError, isOffsetSyncError, Names } from '@offsetsync/contracts';
import { connectNats, inboxPrefix } from '@offsetsync/jetstream';
import { createLogger, loadConfig, provisionDeployment, type OffsetSyncConfig } from '@offsetsync/runtime';
import { type CommandIo, UsageError } from '../command.js';

/** Exit code of an invalid configuration, as the services use. */
const EXIT_CONFIG = 2;

interface ProvisionOptions {
  config: string | undefined;
  timeoutMs: number;
}

function parseProvisionArgs(argv: readonly string[]): ProvisionOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: { config: { type: 'string', short: 'c' }, timeout: { type: 'string', default: '120000' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error: unknown) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const timeoutMs = Number(values.timeout);
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0) {
    throw new UsageError(`--timeout must be a positive number of milliseconds, not '${values.timeout}'`);
  }
  return { config: values.config, timeoutMs };
}

export async function runProvision(argv: readonly string[], io: CommandIo): Promise<number> {
  const options = parseProvisionArgs(argv);
  let config: OffsetSyncConfig;
  try {
    config = loadConfig({ file: options.config });
  } catch (error: unknown) {
    if (!(error instanceof ConfigError)) throw error;
    io.stderr(`offsetsync provision: ${error.message}\n`);
    return EXIT_CONFIG;
  }
  // Log lines go to stderr: stdout carries the report only.
  const logger = createLogger({
    service: 'offsetsync-provision',
    instanceId: config.instance.id,
    level: config.logging.level,
    destination: process.stderr,
  });
  const names = new Names(config.nats.subjectPrefix);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`NATS was not reachable within ${options.timeoutMs} ms`)),
      options.timeoutMs,
    );
  });
  try {
    const nc = await Promise.race([
      connectNats(config.nats, {
        name: `offsetsync-provision-${config.instance.id}`,
        logger,
        inboxPrefix: inboxPrefix(names, 'provision'),
      }),
      deadline,
    ]);
    try {
      const report = await provisionDeployment(nc.jetstream(), await nc.jetstreamManager(), config);
      io.stdout(`${JSON.stringify(report)}\n`);
      return 0;
    } finally {
      await nc.close();
    }
  } catch (error: unknown) {
    const code = isOffsetSyncError(error) ? ` [${error.code}]` : '';
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
    io.stderr(
      `offsetsync provision failed${code}: ${error instanceof Error ? error.message : String(error)}${cause}\n`,
    );
    return 1;
  } finally {
    clearTimeout(timer);
  }
}
