// WatchLinks writes each change of a link's status to a gRPC stream. A client that reads slowly must not
// make health buffer without end: while the stream asks to wait (write returned false), only the newest
// status of each link is kept, and those are written when the stream drains. A watcher then sees every
// link's latest state, perhaps not every state in between, and health holds at most one status per link
// per watcher.
import type { LinkStatus } from '@offsetsync/contracts';

/** The part of a gRPC server stream this needs. */
export interface StatusSink {
  /** Writes one status; false when the stream's buffer is full and the caller should wait for 'drain'. */
  write(status: LinkStatus): boolean;
  once(event: 'drain', listener: () => void): unknown;
}

const linkOf = (s: LinkStatus) => `${s.sourceCluster}\u0000${s.targetCluster}`;

/** Writes link statuses to a stream, coalescing per link while the stream is full. */
export class LinkStatusStream {
  /** The newest status of each link not written yet because the stream was full; undefined while it flows. */
  private held: Map<string, LinkStatus> | undefined;

  constructor(private readonly sink: StatusSink) {}

  /** How many statuses wait for the stream to drain (at most one per link). */
  get waiting(): number {
    return this.held?.size ?? 0;
  }

  send(status: LinkStatus): void {
    if (this.held !== undefined) {
      // Newest last: a link written again goes after the others, as it changed after them.
      this.held.delete(linkOf(status));
      this.held.set(linkOf(status), status);
      return;
    }
    if (!this.sink.write(status)) this.waitForDrain();
  }

  private waitForDrain(): void {
    this.held = new Map();
    this.sink.once('drain', () => this.flush());
  }

  private flush(): void {
    const held = this.held ?? new Map<string, LinkStatus>();
    this.held = undefined;
    for (const [key, status] of held) {
      held.delete(key);
      if (!this.sink.write(status)) {
        // Full again: what is left waits for the next drain, with whatever arrives meanwhile.
        this.held = held;
        this.sink.once('drain', () => this.flush());
        return;
      }
    }
  }
}
