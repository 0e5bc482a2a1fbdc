import { readFile } from 'node:fs/promises';
import { connect, credsAuthenticator, Events, type ConnectionOptions, type NatsConnection } from 'nats';
import type { Logger } from 'pino';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';

/** The NATS settings a service connects with (the `nats` section of the config). */
export interface NatsConnectionSettings {
  servers: string[];
  name?: string | undefined;
  user?: string | undefined;
  password?: string | undefined;
  token?: string | undefined;
  credsFile?: string | undefined;
  connectTimeoutMs: number;
  reconnectWaitMs: number;
}

/**
 * Connects to NATS and keeps the connection: the first connect is retried until it works, later
 * disconnects are reconnected for ever. Every status change is logged once, so an operator sees
 * "NATS unreachable" rather than silence.
 */
export async function connectNats(
  settings: NatsConnectionSettings,
  options: { name: string; logger: Logger },
): Promise<NatsConnection> {
  const connectionOptions: ConnectionOptions = {
    servers: settings.servers,
    name: settings.name ?? options.name,
    timeout: settings.connectTimeoutMs,
    reconnectTimeWait: settings.reconnectWaitMs,
    maxReconnectAttempts: -1,
    waitOnFirstConnect: true,
    // nats.js otherwise captures a stack trace for every request and publish so that a failure can say
    // where it was made: under load that was a sixth of a service's busy time.
    noAsyncTraces: true,
    ...(settings.user !== undefined ? { user: settings.user, pass: settings.password } : {}),
    ...(settings.token !== undefined ? { token: settings.token } : {}),
  };
  if (settings.credsFile !== undefined) {
    connectionOptions.authenticator = credsAuthenticator(await readFile(settings.credsFile));
  }
  let nc: NatsConnection;
  const servers = settings.servers.join(', ');
  options.logger.info({ servers }, 'connecting to NATS');
  // The first connect is retried by the client until it works; say so while it does.
  const waiting = setInterval(
    () => options.logger.warn({ servers }, 'NATS unreachable; still trying to connect'),
    Math.max(5_000, settings.connectTimeoutMs),
  );
  try {
    nc = await connect(connectionOptions);
  } catch (error: unknown) {
    throw new OffsetSyncError(`could not connect to NATS at ${settings.servers.join(', ')}`, {
      code: ErrorCodes.NATS_UNREACHABLE,
      retryable: true,
      cause: error,
    });
  } finally {
    clearInterval(waiting);
  }
  options.logger.info({ server: nc.getServer() }, 'connected to NATS');
  void logStatus(nc, options.logger);
  return nc;
}

async function logStatus(nc: NatsConnection, logger: Logger): Promise<void> {
  for await (const status of nc.status()) {
    switch (status.type) {
      case Events.Disconnect:
        logger.warn({ server: status.data }, 'NATS connection lost; reconnecting');
        break;
      case Events.Reconnect:
        logger.info({ server: status.data }, 'NATS connection restored');
        break;
      case Events.Error:
        logger.error({ error: status.data }, 'NATS connection error');
        break;
      default:
        break;
    }
  }
}
