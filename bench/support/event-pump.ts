// Publishes the health benchmark's events to JetStream: in chunks with a bounded number in flight (as the
// services' publishAll does), and the heartbeats of the pretended services at their interval.
import { isRetryable } from '@offsetsync/contracts';
import { publishAll, type JetStreamPublisher, type StreamMessage } from '@offsetsync/jetstream';
import { heartbeatMessages, type HealthWorkloadShape } from './health-workload.js';

/** How often a chunk JetStream did not acknowledge is sent again (message ids make repeats harmless). */
const ATTEMPTS = 3;

/** Collects messages and publishes them a chunk at a time; {@link flush} sends the rest. */
export class EventPump {
  private buffer: StreamMessage[] = [];
  private sent = 0;

  constructor(
    private readonly publisher: JetStreamPublisher,
    private readonly options: { concurrency: number; chunk: number },
  ) {}

  /** Messages JetStream acknowledged so far. */
  get published(): number {
    return this.sent;
  }

  /** Queues `messages`; publishes the queue once it holds a chunk. */
  async add(messages: readonly StreamMessage[]): Promise<void> {
    for (const m of messages) this.buffer.push(m);
    if (this.buffer.length >= this.options.chunk) await this.flush();
  }

  /** Publishes everything queued and resolves once JetStream acknowledged all of it. */
  async flush(): Promise<void> {
    const batch = this.buffer;
    this.buffer = [];
    if (batch.length === 0) return;
    for (let attempt = 1; ; attempt++) {
      try {
        await publishAll(this.publisher, batch, { concurrency: this.options.concurrency });
        break;
      } catch (error: unknown) {
        if (attempt >= ATTEMPTS || !isRetryable(error)) throw error;
      }
    }
    this.sent += batch.length;
  }
}

/** How many events are due after `elapsedMs` at `perSecond`, less the `sent` ones. Pure. */
export function dueCount(perSecond: number, elapsedMs: number, sent: number): number {
  return Math.max(0, Math.floor((perSecond * elapsedMs) / 1_000) - sent);
}

/**
 * Publishes a heartbeat of a collector, a translator and a committer of the link every `intervalMs`,
 * the first at once, until the returned function is called. A failed beat is reported once per outage.
 */
export function startHeartbeats(
  publisher: JetStreamPublisher,
  shape: HealthWorkloadShape,
  intervalMs: number,
  say: (line: string) => void,
): () => void {
  const startedAtMs = Date.now();
  let failing = false;
  const beat = () => {
    const messages = heartbeatMessages(shape, { startedAtMs, nowMs: Date.now(), intervalMs });
    void Promise.all(
      messages.map((m) =>
        publisher.publish(m.subject, m.payload, m.headers === undefined ? {} : { headers: m.headers }),
      ),
    ).then(
      () => {
        failing = false;
      },
      (error: unknown) => {
        if (!failing) say(`a heartbeat was not stored: ${String(error)}`);
        failing = true;
      },
    );
  };
  beat();
  const timer = setInterval(beat, intervalMs);
  return () => clearInterval(timer);
}
