// The health worker's intake: reads the four offsetsync streams with ordered consumers from their first
// message. (Push-based ordered consumers: the pull-based `consumers.get()` flavour of nats.js never
// delivers on nats-server 2.9.) Each stream keeps the last event per subject, so this replays the current
// state at start and then follows new events; a restarted health service therefore answers the same as
// before. Reading a message into an event is health-events.ts.
import {
  consumerOpts,
  type JetStreamClient,
  type JetStreamManager,
  type JetStreamSubscription,
  type JsMsg,
} from 'nats';
import { type Names } from '@offsetsync/contracts';
import { HEALTH_STREAMS, type HealthStream } from './health-events.js';

/** Options of {@link EventFeed}. */
export interface EventFeedOptions {
  js: JetStreamClient;
  names: Names;
  /** Receives every message, in stream order per stream. */
  onMessage: (stream: HealthStream, message: JsMsg) => void;
  /**
   * Called when reading a stream fails, unless the feed is stopping; during the replay `start()` rejects
   * too. The stream is not read any further.
   */
  onFailure: (stream: HealthStream, error: unknown) => void;
}

function streamFilter(names: Names, kind: HealthStream): string {
  switch (kind) {
    case 'heartbeats':
      return names.heartbeatFilter();
    case 'committed':
      return names.committedFilter();
    case 'translated':
      return names.translatedFilter();
    case 'applied':
      return names.appliedFilter();
  }
}

/** Follows the streams; `start()` resolves once everything they held at start has been read. */
export class EventFeed {
  private readonly subscriptions: JetStreamSubscription[] = [];
  private readonly loops: Promise<void>[] = [];
  private stopped = false;

  constructor(private readonly options: EventFeedOptions) {}

  /** Starts reading every stream; resolves when the state stored at start has been replayed. */
  async start(jsm: JetStreamManager): Promise<void> {
    const caughtUp: Promise<void>[] = [];
    for (const kind of HEALTH_STREAMS) {
      const stream = this.options.names.stream(kind);
      const info = await jsm.streams.info(stream);
      const lastSeq = info.state.messages === 0 ? 0 : info.state.last_seq;
      const messages = await this.options.js.subscribe(
        streamFilter(this.options.names, kind),
        // Bound to its stream: looking the stream up by subject would need a right health lacks.
        consumerOpts().orderedConsumer().deliverAll().bindStream(stream),
      );
      this.subscriptions.push(messages);
      let markCaughtUp!: () => void;
      let failed!: (error: unknown) => void;
      caughtUp.push(
        new Promise<void>((resolve, reject) => {
          markCaughtUp = resolve;
          failed = reject;
        }),
      );
      if (lastSeq === 0) markCaughtUp();
      this.loops.push(this.follow(kind, messages, lastSeq, markCaughtUp, failed));
    }
    await Promise.all(caughtUp);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const messages of this.subscriptions) messages.unsubscribe();
    await Promise.allSettled(this.loops);
  }

  private async follow(
    kind: HealthStream,
    messages: JetStreamSubscription,
    lastSeq: number,
    markCaughtUp: () => void,
    failed: (error: unknown) => void,
  ): Promise<void> {
    try {
      for await (const message of messages) {
        this.options.onMessage(kind, message);
        if (message.info.streamSequence >= lastSeq) markCaughtUp();
      }
    } catch (error: unknown) {
      // Before the replay finished this fails the start; afterwards it is reported (and the start promise,
      // already settled, ignores the rejection).
      failed(error);
      if (!this.stopped) this.options.onFailure(kind, error);
    }
  }
}
