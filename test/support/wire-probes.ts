// Raw-socket probes of what a listener speaks. A client library would hide the answer: nats.js upgrades to
// TLS by itself when a server asks for it, and kafkajs fails for many reasons besides a refused protocol.
// These send one request in the plain wire format and report only whether a protocol answer came back.
import { createConnection, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';

const PROBE_TIMEOUT_MS = 5_000;
const API_VERSIONS_KEY = 18;

/**
 * Whether the Kafka listener at `host:port` answers an ApiVersions (v0) request with the matching
 * correlation id, in plaintext or, with `tls`, over TLS with those options. A TLS listener sent plaintext
 * (or a listener that demands a client certificate not presented) closes the connection instead.
 */
export async function kafkaAnswersApiVersions(
  host: string,
  port: number,
  tls?: ConnectionOptions,
): Promise<boolean> {
  const correlationId = 0x0ff5e7;
  const clientId = Buffer.from('offsetsync-probe');
  const body = Buffer.alloc(2 + 2 + 4 + 2 + clientId.length);
  body.writeInt16BE(API_VERSIONS_KEY, 0);
  body.writeInt16BE(0, 2);
  body.writeInt32BE(correlationId, 4);
  body.writeInt16BE(clientId.length, 8);
  clientId.copy(body, 10);
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length, 0);
  const answer = await exchange(host, port, tls, Buffer.concat([size, body]), (received) =>
    received.length >= 8 ? received.readInt32BE(4) === correlationId : undefined,
  );
  return answer === true;
}

/**
 * What a plaintext NATS client gets from `host:port` after `CONNECT` (with `login`, if given) and `PING`:
 * `'PONG'` when the server accepted it, `'-ERR ...'` with the server's refusal, or `'closed'` when the
 * server hung up (as nats-server does when TLS is required and plaintext arrives).
 */
export async function natsPlaintextPing(
  host: string,
  port: number,
  login: { user: string; pass: string } | undefined,
): Promise<string> {
  const connect = JSON.stringify({ verbose: false, pedantic: false, tls_required: false, ...login });
  const answer = await exchange(
    host,
    port,
    undefined,
    Buffer.from(`CONNECT ${connect}\r\nPING\r\n`),
    (received) => {
      const lines = received.toString('utf8').split('\r\n');
      return lines.find((line) => line === 'PONG' || line.startsWith('-ERR'));
    },
  );
  return answer === undefined ? 'closed' : String(answer);
}

/**
 * Connects, writes `request`, and feeds everything received to `decide` until it returns a value, the
 * server closes, or the probe times out (both giving undefined).
 */
async function exchange<T>(
  host: string,
  port: number,
  tls: ConnectionOptions | undefined,
  request: Buffer,
  decide: (received: Buffer) => T | undefined,
): Promise<T | undefined> {
  return new Promise<T | undefined>((resolve) => {
    let received = Buffer.alloc(0);
    let settled = false;
    const socket: Socket =
      tls === undefined
        ? createConnection({ host, port }, () => socket.write(request))
        : tlsConnect({ host, port, ...tls }, () => socket.write(request));
    const finish = (value: T | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(value);
    };
    const timer = setTimeout(() => finish(undefined), PROBE_TIMEOUT_MS);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const value = decide(received);
      if (value !== undefined) finish(value);
    });
    // A refused handshake or a reset is an answer too: not the protocol's.
    socket.on('error', () => finish(undefined));
    socket.on('close', () => finish(undefined));
  });
}
