// A TCP proxy on a free loopback port that forwards every connection to one upstream address and holds
// each chunk of bytes for a fixed time in each direction, in order: a slow network link between one
// process and a server. Optionally the link also stalls now and then (nothing gets through for a while,
// then everything held arrives at once, as on a congested link). Tests point one process at it (a
// translator at nats-server, say) to make its messages really arrive late, with no test-only branch in
// the code under test.
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface DelayingProxyOptions {
  /** Where the connections go, e.g. `nats://127.0.0.1:4222` or `127.0.0.1:4222`. */
  upstream: string;
  /** How long every chunk is held, in each direction. */
  delayMs: number;
  /**
   * Stalls of the link: from the proxy's start, every `everyMs` for `forMs` nothing is forwarded; what
   * came meanwhile leaves `delayMs` after the stall. Default: none.
   */
  stalls?: { everyMs: number; forMs: number };
}

export interface DelayingProxy {
  /** The proxy's address with the upstream's scheme, e.g. `nats://127.0.0.1:41234`. */
  readonly url: string;
  readonly port: number;
  /** Bytes forwarded so far: `up` from the clients to the upstream, `down` back. */
  readonly bytes: { up: number; down: number };
  /** Closes the listener and every connection through it. Runs once. */
  close(): Promise<void>;
}

/** One direction of one connection: chunks leave in the order they came, each `delayMs` after it came. */
class DelayLine {
  private readonly queue: Array<{ dueAt: number; chunk: Buffer }> = [];
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly to: Socket,
    private readonly delayMs: number,
    /** When a chunk that came at `now` may leave, before the delay. */
    private readonly openAt: (now: number) => number,
    private readonly counted: (bytes: number) => void,
  ) {}

  push(chunk: Buffer): void {
    const dueAt = this.openAt(performance.now()) + this.delayMs;
    this.queue.push({ dueAt, chunk });
    this.timer ??= setTimeout(this.drain, Math.max(1, dueAt - performance.now()));
  }

  /** Ends the far side once everything queued has left. */
  end(): void {
    if (this.queue.length === 0) this.to.end();
    else this.queue.push({ dueAt: -1, chunk: Buffer.alloc(0) });
  }

  stop(): void {
    clearTimeout(this.timer);
    this.queue.length = 0;
  }

  private readonly drain = (): void => {
    this.timer = undefined;
    const now = performance.now();
    while (this.queue.length > 0) {
      const head = this.queue[0]!;
      if (head.dueAt > now) {
        this.timer = setTimeout(this.drain, Math.max(1, head.dueAt - now));
        return;
      }
      this.queue.shift();
      if (head.dueAt === -1) {
        this.to.end();
        return;
      }
      if (!this.to.destroyed) this.to.write(head.chunk);
      this.counted(head.chunk.length);
    }
  };
}

/** Starts a delaying proxy on a free loopback port. */
export async function startDelayingProxy(options: DelayingProxyOptions): Promise<DelayingProxy> {
  const match = /^(?:([a-z]+):\/\/)?([^:/]+):(\d+)\/?$/.exec(options.upstream);
  if (match === null) throw new Error(`upstream must be [scheme://]host:port, got ${options.upstream}`);
  const [, scheme, host, port] = match as unknown as [string, string | undefined, string, string];
  const bytes = { up: 0, down: 0 };
  const startedAt = performance.now();
  const { stalls } = options;
  // Inside a stall: its end; else now. Never earlier than for a chunk that came before, so order holds.
  const openAt = (now: number): number => {
    if (stalls === undefined) return now;
    const into = (now - startedAt) % stalls.everyMs;
    return into < stalls.forMs ? now + stalls.forMs - into : now;
  };
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect({ host, port: Number(port) });
    sockets.add(client);
    sockets.add(upstream);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const up = new DelayLine(upstream, options.delayMs, openAt, (n) => (bytes.up += n));
    const down = new DelayLine(client, options.delayMs, openAt, (n) => (bytes.down += n));
    client.on('data', (chunk: Buffer) => up.push(chunk));
    upstream.on('data', (chunk: Buffer) => down.push(chunk));
    client.on('end', () => up.end());
    upstream.on('end', () => down.end());
    const closeBoth = (): void => {
      up.stop();
      down.stop();
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', closeBoth);
    upstream.on('error', closeBoth);
    client.on('close', closeBoth);
    upstream.on('close', closeBoth);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no TCP address');
  let closing: Promise<void> | undefined;
  return {
    url: `${scheme === undefined ? '' : `${scheme}://`}127.0.0.1:${address.port}`,
    port: address.port,
    bytes,
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      });
      return closing;
    },
  };
}
