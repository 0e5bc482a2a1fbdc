// Every socket the adapter's own clusters open goes through one kafkajs socketFactory, which remembers it
// until it closes. kafkajs forgets sockets in races (two concurrent connects of one broker connection each
// open a socket and only the last is kept; a call in flight reconnects after the cluster was disconnected),
// and a socket kafkajs forgot stays open and keeps the process alive. So disconnect does not rely on
// kafkajs alone: once the ledger is closed it refuses new sockets, aborts connects still in flight, and
// after kafkajs' own disconnect destroys whatever is left.
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { ISocketFactory } from 'kafkajs';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';

/** kafkajs' own keep-alive delay (src/network/socketFactory.js). */
const KEEP_ALIVE_DELAY_MS = 60_000;

/** The error of every call after the adapter began to disconnect. */
export function closedError(cause?: unknown): OffsetSyncError {
  return new OffsetSyncError('the Kafka adapter was disconnected', {
    code: ErrorCodes.LIFECYCLE,
    ...(cause === undefined ? {} : { cause }),
  });
}

/** The sockets of one adapter: open ones, and whether new ones may still be opened. */
export class SocketLedger {
  /** Sockets not closed yet. */
  private readonly open = new Set<Socket>();
  /** Sockets whose connect (TCP, and TLS when used) has not completed yet. */
  private readonly connecting = new Set<Socket>();
  private refused = 0;
  private isClosed = false;

  /** The kafkajs socketFactory: kafkajs' own (keep-alive, TLS server name), each socket remembered. */
  readonly factory: ISocketFactory = ({ host, port, ssl, onConnect }) => {
    if (this.isClosed) throw this.refusal();
    // Called once connected, after `socket` below is assigned.
    const connected = () => {
      this.connecting.delete(socket);
      onConnect();
    };
    const socket: Socket = ssl
      ? tlsConnect({ host, port, ...(isIP(host) ? {} : { servername: host }), ...ssl }, connected)
      : netConnect({ host, port }, connected);
    socket.setKeepAlive(true, KEEP_ALIVE_DELAY_MS);
    this.open.add(socket);
    this.connecting.add(socket);
    socket.once('close', () => {
      this.open.delete(socket);
      this.connecting.delete(socket);
    });
    return socket;
  };

  /** Whether the adapter began to disconnect: no socket is opened any more. */
  get closed(): boolean {
    return this.isClosed;
  }

  /** How many attempts to reach a broker were refused because the adapter was disconnecting. */
  get refusals(): number {
    return this.refused;
  }

  /** Throws the `LIFECYCLE` error (counted as a refusal) once the ledger is closed. */
  assertOpen(): void {
    if (this.isClosed) throw this.refusal();
  }

  /** The `LIFECYCLE` error for an attempt refused because the ledger is closed, counted. */
  refusal(cause?: unknown): OffsetSyncError {
    this.refused += 1;
    return closedError(cause);
  }

  /**
   * Refuses every new socket from now on and aborts the connects in flight: their sockets are destroyed
   * with the `LIFECYCLE` error, which kafkajs hands to whoever waits for the connection.
   */
  close(): void {
    this.isClosed = true;
    for (const socket of this.connecting) socket.destroy(this.refusal());
  }

  /** Destroys every socket still open (those kafkajs forgot included) and resolves once all are closed. */
  async destroyAll(): Promise<void> {
    const closing = [...this.open].map(
      (socket) => new Promise<void>((resolve) => socket.once('close', () => resolve()).destroy()),
    );
    await Promise.all(closing);
  }
}
