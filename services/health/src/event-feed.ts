// Reads the four offsetsync streams with ordered consumers from their first message. (Push-based ordered
// consumers: the pull-based `consumers.get()` flavour of nats.js never delivers on nats-server 2.9.) Each stream keeps
// the last event per subject, so this replays the current state at start and then follows new events;
// a restarted health service therefore answers the same as before. Decoding is in `decodeHealthEvent`.
import {
  consumerOpts,
  type JetStreamClient,
  type JetStreamManager,
  type JetStreamSubscription,
  type JsMsg,
} from 'nats';
import {
  ApplyOutcome,
  DeletionReason,
  Heartbeat,
  OffsetApplied,
  OffsetCommitted,
  OffsetDeleted,
  OffsetTranslated,
  type Names,
  EVENT_TYPE_HEADER,
} from '@offsetsync/contracts';
import { type Logger } from '@offsetsync/runtime';
import type { HealthEvent } from './health-state.js';

const DELETION_WORDS: Record<number, string> = {
  [DeletionReason.DELETION_REASON_OFFSET_DELETED]: 'offsets deleted by an administrator',
  [DeletionReason.DELETION_REASON_GROUP_DELETED]: 'group deleted',
  [DeletionReason.DELETION_REASON_OFFSET_EXPIRED]: 'offsets expired',
};

type StreamKind = 'committed' | 'translated' | 'applied' | 'heartbeats';

/** Decodes one stream message into a health event; undefined for messages health does not use. */
export function decodeHealthEvent(kind: StreamKind, type: string, data: Uint8Array): HealthEvent | undefined {
  const version = (v: { offsetsPartition: number; offsetsOffset: number } | undefined) =>
    v ?? { offsetsPartition: -1, offsetsOffset: -1 };
  switch (kind) {
    case 'heartbeats': {
      const b = Heartbeat.decode(data);
      return {
        kind: 'heartbeat',
        instance: {
          role: b.role,
          instanceId: b.instanceId,
          sourceClusters: b.sourceClusters,
          targetCluster: b.targetCluster,
          lastHeartbeatMs: b.sentAtMs,
          intervalMs: b.intervalMs,
          pending: b.progress?.pending ?? 0,
          softwareVersion: b.softwareVersion,
          problems: b.problems,
        },
      };
    }
    case 'committed': {
      if (type === 'OffsetDeleted') {
        const d = OffsetDeleted.decode(data);
        const fact = {
          version: version(d.version),
          detail: DELETION_WORDS[d.reason] ?? 'offsets removed',
          observedAtMs: d.observedAtMs,
        };
        return d.partition < 0
          ? { kind: 'deleted', source: d.sourceCluster, group: d.group, fact }
          : {
              kind: 'deleted',
              source: d.sourceCluster,
              group: d.group,
              partition: { topic: d.topic, partition: d.partition },
              fact,
            };
      }
      if (type !== 'OffsetCommitted') return undefined;
      const c = OffsetCommitted.decode(data);
      return {
        kind: 'committed',
        source: c.sourceCluster,
        group: c.group,
        topic: c.topic,
        partition: c.partition,
        fact: {
          version: version(c.version),
          offset: c.committedOffset,
          commitTimestampMs: c.commitTimestampMs,
          observedAtMs: c.observedAtMs,
        },
      };
    }
    case 'translated': {
      const t = OffsetTranslated.decode(data);
      return {
        kind: 'translated',
        link: { source: t.sourceCluster, target: t.targetCluster },
        group: t.group,
        topic: t.topic,
        partition: t.partition,
        fact: {
          version: version(t.version),
          sourceOffset: t.sourceOffset,
          targetOffset: t.targetOffset,
          outcome: t.outcome,
          refusalReason: t.refusalReason,
          detail: t.detail,
          attempts: t.attempts,
          sourceCommitTimestampMs: t.sourceCommitTimestampMs,
        },
      };
    }
    case 'applied': {
      const a = OffsetApplied.decode(data);
      if (a.outcome === ApplyOutcome.APPLY_OUTCOME_UNSPECIFIED) return undefined;
      return {
        kind: 'applied',
        link: { source: a.sourceCluster, target: a.targetCluster },
        group: a.group,
        topic: a.topic,
        partition: a.partition,
        fact: {
          version: version(a.version),
          sourceOffset: a.sourceOffset,
          targetOffset: a.targetOffset,
          exact: a.exact,
          outcome: a.outcome,
          skipReason: a.skipReason,
          detail: a.detail,
          sourceCommitTimestampMs: a.sourceCommitTimestampMs,
          appliedAtMs: a.appliedAtMs,
        },
      };
    }
  }
}

/** Options of {@link EventFeed}. */
export interface EventFeedOptions {
  js: JetStreamClient;
  names: Names;
  logger: Logger;
  /** Receives every decoded event, in stream order per stream. */
  onEvent: (event: HealthEvent) => void;
}

function streamFilter(names: Names, kind: StreamKind): string {
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

const KINDS: readonly StreamKind[] = ['heartbeats', 'committed', 'translated', 'applied'];

/** Follows the streams; `start()` resolves once everything they held at start has been read. */
export class EventFeed {
  private readonly subscriptions: JetStreamSubscription[] = [];
  private readonly loops: Promise<void>[] = [];
  private stopped = false;

  constructor(private readonly options: EventFeedOptions) {}

  /** Starts reading every stream; resolves when the state stored at start has been replayed. */
  async start(jsm: JetStreamManager): Promise<void> {
    const caughtUp: Promise<void>[] = [];
    for (const kind of KINDS) {
      const stream = this.options.names.stream(kind);
      const info = await jsm.streams.info(stream);
      const lastSeq = info.state.messages === 0 ? 0 : info.state.last_seq;
      const messages = await this.options.js.subscribe(
        streamFilter(this.options.names, kind),
        consumerOpts().orderedConsumer().deliverAll(),
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
    kind: StreamKind,
    messages: JetStreamSubscription,
    lastSeq: number,
    markCaughtUp: () => void,
    failed: (error: unknown) => void,
  ): Promise<void> {
    try {
      for await (const message of messages) {
        this.handle(kind, message);
        if (message.info.streamSequence >= lastSeq) markCaughtUp();
      }
    } catch (error: unknown) {
      // Before the replay finished this fails the start; afterwards it is logged (and the start promise,
      // already settled, ignores the rejection).
      failed(error);
      if (!this.stopped) this.options.logger.error({ err: error, kind }, 'reading a stream failed');
    }
  }

  private handle(kind: StreamKind, message: JsMsg): void {
    let event: HealthEvent | undefined;
    try {
      event = decodeHealthEvent(kind, message.headers?.get(EVENT_TYPE_HEADER) ?? '', message.data);
    } catch (error: unknown) {
      // A message health cannot read is skipped; the stream keeps it for the services that own it.
      this.options.logger.warn({ err: error, subject: message.subject }, 'undecodable event ignored');
      return;
    }
    if (event !== undefined) this.options.onEvent(event);
  }
}
