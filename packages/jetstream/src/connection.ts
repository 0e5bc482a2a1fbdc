import {
  connect,
  credsAuthenticator,
  Events,
  nkeyAuthenticator,
  tokenAuthenticator,
  usernamePasswordAuthenticator,
  type Authenticator,
  type ConnectionOptions,
  type NatsConnection,
} from 'nats';
import type { Logger } from 'pino';
import { ErrorCodes, OffsetSyncError, readSecretFile } from '@offsetsync/contracts';
import { redactUrlCredentials } from './redact-url.js';

/** The NATS settings a service connects with (the `nats` section of the config). */
export interface NatsConnectionSettings {
  servers: string[];
  name?: string | undefined;
  user?: string | undefined;
  password?: string | undefined;
  passwordFile?: string | undefined;
  token?: string | undefined;
  tokenFile?: string | undefined;
  nkeySeedFile?: string | undefined;
  credsFile?: string | undefined;
  /** When set, the connection must be TLS. */
  tls?:
    { caFile?: string | undefined; certFile?: string | undefined; keyFile?: string | undefined } | undefined;
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
  options: {
    name: string;
    logger: Logger;
    /** Subjects replies come to (nats.js' default `_INBOX`); see {@link inboxPrefix}. */
    inboxPrefix?: string;
  },
): Promise<NatsConnection> {
  const connectionOptions: ConnectionOptions = {
    servers: settings.servers,
    name: settings.name ?? options.name,
    timeout: settings.connectTimeoutMs,
    reconnectTimeWait: settings.reconnectWaitMs,
    maxReconnectAttempts: -1,
    // The first connect is retried here rather than by the client, so that every failed attempt can say
    // why (refused, untrusted certificate, rejected credentials) instead of only that it is still trying.
    waitOnFirstConnect: false,
    // nats.js otherwise captures a stack trace for every request and publish so that a failure can say
    // where it was made: under load that was a sixth of a service's busy time.
    noAsyncTraces: true,
    ...(options.inboxPrefix === undefined ? {} : { inboxPrefix: options.inboxPrefix }),
    ...(settings.tls === undefined ? {} : { tls: tlsOptions(settings.tls) }),
  };
  const authenticator = natsAuthenticator(settings);
  if (authenticator !== undefined) connectionOptions.authenticator = authenticator;
  const servers = settings.servers.map(redactUrlCredentials).join(', ');
  options.logger.info({ servers, tls: settings.tls !== undefined }, 'connecting to NATS');
  let nc: NatsConnection | undefined;
  let lastReason: string | undefined;
  for (let attempt = 1; nc === undefined; attempt++) {
    try {
      nc = await connect(connectionOptions);
    } catch (error: unknown) {
      const reason = connectFailureReason(error);
      if (isAuthenticationError(error)) {
        // Credentials do not start working by asking again: the process exits and its supervisor restarts
        // it, which also reads a corrected Secret.
        throw new OffsetSyncError(`NATS at ${servers} refused offsetsync's credentials: ${reason}`, {
          code: ErrorCodes.AUTH_FAILED,
          retryable: false,
          cause: error,
          details: { operation: 'connect', servers },
        });
      }
      // Said once per distinct reason, so a server that stays down does not fill the log.
      if (reason !== lastReason) {
        options.logger.warn({ servers, attempt, reason }, 'could not connect to NATS; retrying');
        lastReason = reason;
      }
      await sleep(Math.min(30_000, settings.reconnectWaitMs * 2 ** Math.min(attempt - 1, 5)));
    }
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

/**
 * nats.js' options for TLS: with `tls` set the client refuses a server that does not offer TLS, so a
 * configured TLS can never fall back to plaintext. nats.js reads the files itself on every connect.
 */
function tlsOptions(tls: NonNullable<NatsConnectionSettings['tls']>): NonNullable<ConnectionOptions['tls']> {
  return {
    ...(tls.caFile === undefined ? {} : { caFile: tls.caFile }),
    ...(tls.certFile === undefined ? {} : { certFile: tls.certFile }),
    ...(tls.keyFile === undefined ? {} : { keyFile: tls.keyFile }),
  };
}

/**
 * The authenticator of the configured method. Secrets given as files are read on every (re)connect, so a
 * rotated or corrected secret works without a restart; a file that cannot be read then fails that
 * attempt only, and the client tries again.
 */
function natsAuthenticator(settings: NatsConnectionSettings): Authenticator | undefined {
  const fromFile = (file: string) => () => readSecretFile(file);
  if (settings.user !== undefined) {
    const password =
      settings.passwordFile === undefined ? settings.password : fromFile(settings.passwordFile);
    return usernamePasswordAuthenticator(settings.user, password);
  }
  if (settings.tokenFile !== undefined) return tokenAuthenticator(fromFile(settings.tokenFile));
  if (settings.token !== undefined) return tokenAuthenticator(settings.token);
  if (settings.nkeySeedFile !== undefined) {
    const file = settings.nkeySeedFile;
    return nkeyAuthenticator(() => new TextEncoder().encode(readSecretFile(file)));
  }
  if (settings.credsFile !== undefined) {
    const file = settings.credsFile;
    return credsAuthenticator(() => new TextEncoder().encode(readSecretFile(file)));
  }
  return undefined;
}

/** nats.js' codes for a server that refused the client's credentials. */
const AUTHENTICATION_ERROR_CODES: ReadonlySet<string> = new Set([
  'AUTHORIZATION_VIOLATION',
  'BAD_AUTHENTICATION',
  'BAD_CREDS',
  'AUTHENTICATION_EXPIRED',
  'ACCOUNT_EXPIRED',
  'AUTHENTICATION_TIMEOUT',
]);

/** Whether nats.js failed because the server did not accept the credentials (not because it was down). */
export function isAuthenticationError(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && AUTHENTICATION_ERROR_CODES.has(code);
}

/** Why a connect failed, in a few words: nats.js' or the TLS layer's code and message. */
function connectFailureReason(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${typeof code === 'string' ? `${code}: ` : ''}${error.message}${cause}`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
