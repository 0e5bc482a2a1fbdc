import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { connect, type ConnectionOptions } from 'nats';
import { TestbedError } from './errors.js';
import { freePort } from './free-port.js';
import { natsServerConfig, type NatsServerSecurity } from './nats-config.js';
import { isAlive, spawnDetached } from './processes.js';
import { GiveUp, waitFor } from './wait.js';

/** A private nats-server with JetStream, its store in `storeDir`. */
export interface NatsServerInfo {
  /** `nats://127.0.0.1:<port>`, or `tls://127.0.0.1:<port>` when it only speaks TLS. */
  url: string;
  port: number;
  pid: number;
  storeDir: string;
  logFile: string;
  /** Whether clients must use TLS and log in (the secured bed). */
  secure: boolean;
  /** The configuration file it was started with; only a secured server has one. */
  configFile?: string;
}

/** The nats-server binary: `$NATS_SERVER_BIN`, else the one on PATH. */
function natsServerBinary(env: NodeJS.ProcessEnv = process.env): string {
  return env.NATS_SERVER_BIN ?? 'nats-server';
}

/**
 * Starts nats-server with JetStream on a free loopback port (or `port`, to restart one in place with
 * its store) and resolves once a client gets JetStream account info from it. With `security` it speaks
 * only TLS and admits only its users; its configuration is written to `<dir>/nats-server.conf` (and left
 * there), and a restart in place with the same `dir`, `port` and `security` writes the same file again.
 */
export async function startNatsServer(options: {
  dir: string;
  port?: number;
  readyTimeoutMs?: number;
  security?: NatsServerSecurity;
}): Promise<NatsServerInfo> {
  const storeDir = join(options.dir, 'jetstream');
  const logFile = join(options.dir, 'nats-server.log');
  await mkdir(storeDir, { recursive: true });
  const port = options.port ?? (await freePort());
  const { security } = options;
  if (security === undefined) {
    const pid = spawnDetached(
      natsServerBinary(),
      ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir, '-n', `offsetsync-test-${port}`],
      logFile,
    );
    const info: NatsServerInfo = {
      url: `nats://127.0.0.1:${port}`,
      port,
      pid,
      storeDir,
      logFile,
      secure: false,
    };
    await waitForNats(info, {}, options.readyTimeoutMs ?? 20_000);
    return info;
  }
  const configFile = join(options.dir, 'nats-server.conf');
  await writeFile(configFile, natsServerConfig({ port, storeDir, security }), { mode: 0o600 });
  const pid = spawnDetached(natsServerBinary(), ['-c', configFile], logFile);
  const info: NatsServerInfo = {
    url: `tls://127.0.0.1:${port}`,
    port,
    pid,
    storeDir,
    logFile,
    secure: true,
    configFile,
  };
  await waitForNats(
    info,
    { tls: { caFile: security.caFile }, user: security.admin.user, pass: security.admin.password },
    options.readyTimeoutMs ?? 20_000,
  );
  return info;
}

/**
 * Starts a stopped server again in place: the same port and store, and for a secured one the
 * configuration file its first start wrote (users and permissions included), so a caller needs only the
 * state file's info. `login` (the CA and the admin) is how the readiness check gets in; a secured
 * server needs it.
 */
export async function restartNatsServer(
  info: NatsServerInfo,
  login?: { caFile: string; user: string; password: string },
  options: { readyTimeoutMs?: number } = {},
): Promise<NatsServerInfo> {
  if (info.configFile === undefined) {
    return startNatsServer({
      dir: dirname(info.storeDir),
      port: info.port,
      ...(options.readyTimeoutMs === undefined ? {} : { readyTimeoutMs: options.readyTimeoutMs }),
    });
  }
  if (login === undefined)
    throw new TestbedError('INVALID_OPTIONS', 'restarting a secured nats-server needs its admin login');
  const pid = spawnDetached(natsServerBinary(), ['-c', info.configFile], info.logFile);
  const restarted: NatsServerInfo = { ...info, pid };
  await waitForNats(
    restarted,
    { tls: { caFile: login.caFile }, user: login.user, pass: login.password },
    options.readyTimeoutMs ?? 20_000,
  );
  return restarted;
}

/** Waits until JetStream answers an account info request (as the admin, over TLS, on a secured server). */
async function waitForNats(
  info: NatsServerInfo,
  login: Pick<ConnectionOptions, 'tls' | 'user' | 'pass'>,
  timeoutMs: number,
): Promise<void> {
  await waitFor(
    `nats-server at ${info.url}`,
    async () => {
      if (!isAlive(info.pid)) {
        const tail = await readFile(info.logFile, 'utf8').catch(() => '');
        throw new GiveUp(`nats-server ${info.pid} exited; log tail:\n${tail.slice(-2000)}`);
      }
      const nc = await connect({ servers: info.url, reconnect: false, timeout: 1000, ...login });
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
