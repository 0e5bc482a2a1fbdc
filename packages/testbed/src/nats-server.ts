import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connect } from 'nats';
import { freePort } from './free-port.js';
import { isAlive, spawnDetached } from './processes.js';
import { GiveUp, waitFor } from './wait.js';

/** A private nats-server with JetStream, its store in `storeDir`. */
export interface NatsServerInfo {
  url: string;
  port: number;
  pid: number;
  storeDir: string;
  logFile: string;
}

/** The nats-server binary: `$NATS_SERVER_BIN`, else the one on PATH. */
function natsServerBinary(env: NodeJS.ProcessEnv = process.env): string {
  return env.NATS_SERVER_BIN ?? 'nats-server';
}

/**
 * Starts nats-server with JetStream on a free loopback port (or `port`, to restart one in place with
 * its store) and resolves once a client gets JetStream account info from it.
 */
export async function startNatsServer(options: {
  dir: string;
  port?: number;
  readyTimeoutMs?: number;
}): Promise<NatsServerInfo> {
  const storeDir = join(options.dir, 'jetstream');
  const logFile = join(options.dir, 'nats-server.log');
  await mkdir(storeDir, { recursive: true });
  const port = options.port ?? (await freePort());
  const pid = spawnDetached(
    natsServerBinary(),
    ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir, '-n', `offsetsync-test-${port}`],
    logFile,
  );
  const info: NatsServerInfo = { url: `nats://127.0.0.1:${port}`, port, pid, storeDir, logFile };
  await waitForNats(info, options.readyTimeoutMs ?? 20_000);
  return info;
}

/** Waits until JetStream answers an account info request. */
async function waitForNats(info: NatsServerInfo, timeoutMs: number): Promise<void> {
  await waitFor(
    `nats-server at ${info.url}`,
    async () => {
      if (!isAlive(info.pid)) {
        const tail = await readFile(info.logFile, 'utf8').catch(() => '');
        throw new GiveUp(`nats-server ${info.pid} exited; log tail:\n${tail.slice(-2000)}`);
      }
      const nc = await connect({ servers: info.url, reconnect: false, timeout: 1000 });
      try {
        const jsm = await nc.jetstreamManager({ timeout: 1000 });
        await jsm.getAccountInfo();
        return true;
      } finally {
        await nc.close();
      }
    },
    { timeoutMs, intervalMs: 100 },
  );
}
