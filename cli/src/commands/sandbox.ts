// `offsetsync sandbox` (and `npm start`): the whole product on one machine, with a demo group that moves.
import { connect } from 'node:net';
import type { CommandIo } from '../command.js';
import { UsageError } from '../command.js';
import { Sandbox, SandboxStopped, type SandboxOptions } from '../sandbox/sandbox.js';

/** Reads the command line into sandbox options; unknown or malformed options are usage errors. */
export function parseSandboxArgs(argv: readonly string[]): SandboxOptions {
  const options: SandboxOptions = {};
  const integer = (flag: string, value: string | undefined, min: number): number => {
    const n = Number(value);
    if (value === undefined || !Number.isSafeInteger(n) || n < min) {
      throw new UsageError(`${flag} needs an integer of at least ${min}`);
    }
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (flag === '--prometheus') {
      options.prometheus = true;
      continue;
    }
    const value = argv[i + 1];
    i += 1;
    switch (flag) {
      case '--topic':
      case '--group':
        if (value === undefined || value === '' || value.startsWith('-')) {
          throw new UsageError(`${flag} needs a name`);
        }
        options[flag === '--topic' ? 'topic' : 'group'] = value;
        break;
      case '--partitions':
        options.partitions = integer(flag, value, 1);
        break;
      case '--records':
        options.recordsPerPartition = integer(flag, value, 20);
        break;
      default:
        throw new UsageError(`unknown option ${flag}`);
    }
  }
  return options;
}

/** True when something accepts TCP connections on `host:port` within a second. */
function listening(address: string): Promise<boolean> {
  const [host, port] = address.split(':') as [string, string];
  return new Promise((resolve) => {
    const socket = connect({ host, port: Number(port), timeout: 1_000 });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

function elapsed(ms: number): string {
  return `${(ms / 1000).toFixed(1).padStart(6)}s`;
}

/** Resolves at the first SIGINT or SIGTERM; `dispose` removes the handlers. */
function signals(): { received: Promise<NodeJS.Signals>; dispose: () => void } {
  let dispose = () => undefined as void;
  const received = new Promise<NodeJS.Signals>((resolve) => {
    const handler = (signal: NodeJS.Signals) => resolve(signal);
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
    dispose = () => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    };
  });
  return { received, dispose };
}

/** `offsetsync sandbox ...`: runs until Ctrl-C or SIGTERM (0), or fails to start or move the group (1). */
export async function runSandbox(argv: readonly string[], io: CommandIo): Promise<number> {
  const options = parseSandboxArgs(argv);
  const sandbox = new Sandbox(options, (ms, text) => io.stdout(`[${elapsed(ms)}] ${text}\n`));
  const { received, dispose } = signals();
  let signalled: NodeJS.Signals | undefined;
  void received.then((signal) => {
    signalled = signal;
    io.stdout(`\n${signal}: stopping every process the sandbox started\n`);
    return sandbox.stop();
  });
  try {
    io.stdout('offsetsync sandbox: starting (Ctrl-C stops it)\n');
    const endpoints = await sandbox.start();
    for (const move of await sandbox.moveGroup()) io.stdout(`${move.line}\n`);
    const health = endpoints.services.find((s) => s.role === 'health');
    // Says so when the health service is not answering rather than pretend its API is up.
    const healthLine = (await listening(endpoints.healthAddress))
      ? `${endpoints.healthAddress}  (npx offsetsync status --address ${endpoints.healthAddress})`
      : `pid ${health?.pid} is not answering on ${endpoints.healthAddress}; see ${health?.logFile}`;
    io.stdout(
      [
        '',
        'The sandbox keeps running. Try:',
        `  health service      ${healthLine}`,
        `  source Kafka        ${endpoints.testbed.source.bootstrapServers}  (${endpoints.topic})`,
        ...endpoints.targets.map(
          (t) => `  ${`${t.cluster} Kafka`.padEnd(20)}${t.bootstrapServers}  (${t.topic}, the copy)`,
        ),
        `  NATS                ${endpoints.testbed.nats.url}  (subject prefix ${endpoints.subjectPrefix})`,
        `  offsetsync config   ${endpoints.configFile}`,
        ...endpoints.targets.map(
          (t) => `  ${`MM2 -> ${t.cluster}`.padEnd(20)}${t.mirrorMaker.propertiesFile}`,
        ),
        ...(endpoints.prometheus === undefined
          ? []
          : [
              `  Prometheus          http://${endpoints.prometheus.address}  (alerts: http://${endpoints.prometheus.address}/alerts)`,
            ]),
        `  logs                ${endpoints.testbed.workDir}`,
        'Ctrl-C stops everything.',
        '',
      ].join('\n'),
    );
    await received;
    await sandbox.stop();
    io.stdout('sandbox stopped\n');
    return 0;
  } catch (error: unknown) {
    if (signalled !== undefined && (error instanceof SandboxStopped || sandbox.isStopping)) {
      await sandbox.stop();
      io.stdout('sandbox stopped\n');
      return 0;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.stderr(`offsetsync sandbox: ${message}\n`);
    await sandbox.stop();
    return 1;
  } finally {
    dispose();
  }
}
