// The health worker's intake: reads the four offsetsync streams from their first message, each through a
// pull consumer of its own. Each stream keeps the last event per subject, so this replays the current
// state at start and then follows new events; a restarted health service therefore answers the same as
// before. Reading a message into an event is health-events.ts.
//
// The consumers are ephemeral and named by health (`health_<nuid>`), created with the named form of the
// JetStream API, which is all health's NATS user may use: the unnamed form would let its payload name
// and update a durable (see natsPermissions). nats.js' own ordered consumers re-create themselves with
// that unnamed form, so they are not used. What they did is done here: the consumer's delivery sequence
// must go up by one with every message; a gap (messages the consumer sent that never arrived), a consumer
// that vanished (deleted, or removed by the server after a long disconnection) or any other failure makes
// a new consumer that starts after the last message read. Nothing is skipped or read twice, and a stream
// that cannot be read is reported and retried with backoff, never given up.
import {
  AckPolicy,
  DeliverPolicy,
  nanos,
  nuid,
  type Consumer,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from 'nats';
import { type Names } from '@offsetsync/contracts';
import { doublingBackoffMs } from '@offsetsync/runtime';
import { HEALTH_STREAMS, type HealthStream } from './health-events.js';

/** Options of {@link EventFeed}. */
export interface EventFeedOptions {
  js: JetStreamClient;
  names: Names;
  /** Receives every message once, in stream order per stream. */
  onMessage: (stream: HealthStream, message: JsMsg) => void;
  /**
   * Called when reading a stream fails, unless the feed is stopping; during the replay `start()` rejects
   * instead. The feed tries again after a backoff.
   */
  onFailure: (stream: HealthStream, error: unknown) => void;
  /** Called when a stream that failed is read again. */
  onRecovery: (stream: HealthStream) => void;
  /** Backoff after a failure: from `minMs`, doubling, at most `maxMs`. Default 250 ms to 10 s. */
  retry?: { minMs: number; maxMs: number };
}

/** Most messages one pull asks for. */
const PULL_MAX_MESSAGES = 1_000;
/** How long one pull waits for messages before the next is sent (JetStream's minimum is 1 s). */
const PULL_EXPIRES_MS = 5_000;
/** A consumer nobody pulls from for this long is removed by the server (after a crash of health, say). */
const CONSUMER_INACTIVE_MS = 60_000;

/** Where reading one stream stands. */
export interface Cursor {
  /** The stream sequence to read from next. */
  nextSequence: number;
  /** The delivery sequence of the current consumer's last message (0 before its first). */
  lastDelivery: number;
}

/** What to do with a message the consumer delivered. Pure. */
export type Step =
  | { take: true; cursor: Cursor }
  /** Already read (a new consumer never starts before the cursor, so this is only a safeguard). */
  | { take: false; cursor: Cursor }
  /** Messages went missing between this consumer and health: start a new consumer at the cursor. */
  | { gap: true };

export function step(cursor: Cursor, message: { streamSequence: number; deliverySequence: number }): Step {
  if (message.deliverySequence !== cursor.lastDelivery + 1) return { gap: true };
  const lastDelivery = message.deliverySequence;
  if (message.streamSequence < cursor.nextSequence)
    return { take: false, cursor: { ...cursor, lastDelivery } };
  return { take: true, cursor: { nextSequence: message.streamSequence + 1, lastDelivery } };
}

/** A gap in the consumer's delivery sequence. */
class DeliveryGap extends Error {}

/** Follows the streams; `start()` resolves once everything they held at start has been read. */
export class EventFeed {
  private readonly followers: StreamFollower[] = [];

  constructor(private readonly options: EventFeedOptions) {}

  /** Starts reading every stream; resolves when the state stored at start has been replayed. */
  async start(jsm: JetStreamManager): Promise<void> {
    // Every stream's last sequence first: a replay started while the next info is awaited could fail with
    // nothing listening yet, an unhandled rejection that would end the process instead of failing start().
    const lastSequences = new Map<HealthStream, number>();
    for (const kind of HEALTH_STREAMS) {
      const info = await jsm.streams.info(this.options.names.stream(kind));
      lastSequences.set(kind, info.state.messages === 0 ? 0 : info.state.last_seq);
    }
    const caughtUp = HEALTH_STREAMS.map((kind) => {
      const follower = new StreamFollower(kind, jsm, this.options);
      this.followers.push(follower);
      return follower.start(lastSequences.get(kind) ?? 0);
    });
    await Promise.all(caughtUp);
  }

  async stop(): Promise<void> {
    await Promise.all(this.followers.map((follower) => follower.stop()));
  }
}

/** Reads one stream for ever, through one consumer after another. */
class StreamFollower {
  private readonly stream: string;
  private readonly filter: string;
  private cursor: Cursor = { nextSequence: 1, lastDelivery: 0 };
  private pulling: ConsumerMessages | undefined;
  private stopped = false;
  private failing = false;
  private wakeSleep: (() => void) | undefined;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly kind: HealthStream,
    private readonly jsm: JetStreamManager,
    private readonly options: EventFeedOptions,
  ) {
    this.stream = options.names.stream(kind);
    this.filter = options.names.streamFilter(kind);
  }

  /** Resolves once the message at `lastSequence` (the stream's last at start) has been read. */
  start(lastSequence: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const replayed = { resolve, reject, lastSequence, done: lastSequence === 0 };
      if (replayed.done) resolve();
      this.loop = this.follow(replayed);
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.pulling?.stop();
    this.wakeSleep?.();
    await this.loop;
  }

  private async follow(replayed: {
    resolve: () => void;
    reject: (error: unknown) => void;
    lastSequence: number;
    done: boolean;
  }): Promise<void> {
    let failuresInARow = 0;
    while (!this.stopped) {
      try {
        const consumer = await this.openConsumer();
        while (!this.stopped) {
          this.pulling = await consumer.fetch({ max_messages: PULL_MAX_MESSAGES, expires: PULL_EXPIRES_MS });
          if (this.stopped) this.pulling.stop();
          for await (const message of this.pulling) {
            const next = step(this.cursor, message.info);
            if ('gap' in next) throw new DeliveryGap();
            this.cursor = next.cursor;
            if (next.take) this.options.onMessage(this.kind, message);
            if (!replayed.done && message.info.streamSequence >= replayed.lastSequence) {
              replayed.done = true;
              replayed.resolve();
            }
          }
          // A pull that ended normally proves the stream readable again.
          failuresInARow = 0;
          if (this.failing) {
            this.failing = false;
            this.options.onRecovery(this.kind);
          }
        }
      } catch (error: unknown) {
        if (this.stopped) break;
        if (error instanceof DeliveryGap) continue;
        if (!replayed.done) {
          // The replay is the start: a stream that cannot be read then fails it.
          replayed.reject(error);
          return;
        }
        failuresInARow += 1;
        this.failing = true;
        this.options.onFailure(this.kind, error);
        await this.sleep(
          doublingBackoffMs(failuresInARow, this.options.retry ?? { minMs: 250, maxMs: 10_000 }),
        );
      } finally {
        this.pulling = undefined;
      }
    }
  }

  /** A new consumer delivering the stream from the cursor on. */
  private async openConsumer(): Promise<Consumer> {
    const name = `health_${nuid.next()}`;
    const from = this.cursor.nextSequence;
    await this.jsm.consumers.add(this.stream, {
      name,
      filter_subject: this.filter,
      ack_policy: AckPolicy.None,
      ...(from <= 1
        ? { deliver_policy: DeliverPolicy.All }
        : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from }),
      inactive_threshold: nanos(CONSUMER_INACTIVE_MS),
      mem_storage: true,
      num_replicas: 1,
    });
    this.cursor = { nextSequence: from, lastDelivery: 0 };
    return this.options.js.consumers.get(this.stream, name);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeSleep = () => {
        clearTimeout(timer);
        resolve();
      };
    }).finally(() => (this.wakeSleep = undefined));
  }
}
