// The translator worker: for every link into its target, reads OffsetCommitted events, locates their
// anchors on the target and publishes OffsetTranslated events. Pending translations are retried with
// backoff (nak with a delay) until the record arrives; newer commits of the same key supersede them.
import { context, SpanKind, trace, type Span } from '@opentelemetry/api';
import { headers, type JsMsg } from 'nats';
import {
  extractTraceContext,
  injectTraceContext,
  OffsetCommitted,
  OffsetTranslated,
  Progress,
  TranslationOutcome,
  EVENT_TYPE_HEADER,
} from '@offsetsync/contracts';
import {
  BatchConsumer,
  provisionDurableConsumer,
  JetStreamPublisher,
  publishAll,
  type StreamMessage,
} from '@offsetsync/jetstream';
import { toOffsetSyncError, KafkaAdapter } from '@offsetsync/kafka';
import {
  ProblemBoard,
  type HeartbeatState,
  type ServiceContext,
  type ServiceWorker,
} from '@offsetsync/runtime';
import { AnchorLocator, partitionKey, type LocateRequest } from './anchor-locator.js';
import { DeltaMemory } from './delta-memory.js';
import { decide, decideWithoutTarget, type Location, type Translation } from './translation-plan.js';

interface Work {
  message: JsMsg;
  event: OffsetCommitted;
  span: Span;
  translation?: Translation;
}

/** Deliveries of an event whose search window ran out before its inexact fallback is published. */
const EXHAUSTED_ATTEMPTS_BEFORE_FALLBACK = 4;

const OUTCOME_NAMES: Record<number, string> = {
  [TranslationOutcome.TRANSLATION_OUTCOME_EXACT]: 'exact',
  [TranslationOutcome.TRANSLATION_OUTCOME_INEXACT]: 'inexact',
  [TranslationOutcome.TRANSLATION_OUTCOME_PENDING]: 'pending',
  [TranslationOutcome.TRANSLATION_OUTCOME_REFUSED]: 'refused',
};

/** Batches translated at once (never two with the same key). */
const BATCH_CONCURRENCY = 4;

export class Translator implements ServiceWorker {
  private readonly adapter: KafkaAdapter;
  private readonly publisher: JetStreamPublisher;
  private readonly locator: AnchorLocator;
  private readonly deltas = new DeltaMemory();
  private readonly consumers: BatchConsumer[] = [];
  private readonly counts = new Map<string, number>();
  private readonly pendingKeys = new Set<string>();
  private readonly problems = new ProblemBoard();
  private lastEventAtMs = 0;
  private readonly record: (outcome: string) => void;
  readonly heartbeat: HeartbeatState;

  constructor(private readonly context: ServiceContext) {
    const settings = context.config.translator;
    if (settings === undefined) throw new Error('the translator needs the translator section of the config');
    const cluster = context.config.clusters[settings.target];
    if (cluster === undefined) throw new Error(`cluster '${settings.target}' is not configured`);
    this.adapter = new KafkaAdapter({
      cluster,
      clientId: `offsetsync-translator-${context.config.instance.id}`,
      logger: context.logger,
    });
    this.publisher = new JetStreamPublisher(context.nats);
    this.locator = new AnchorLocator(this.adapter, {
      probeWindow: settings.probeWindow,
      scanLimit: settings.scanLimit,
      cacheSize: settings.cacheSize,
    });
    const outcomes = context.telemetry.meter.createCounter('offsetsync_translations', {
      description: 'Translations by outcome (exact, inexact, pending, refused).',
    });
    this.record = (outcome) => {
      this.counts.set(outcome, (this.counts.get(outcome) ?? 0) + 1);
      outcomes.add(1, { outcome });
    };
    context.telemetry.meter
      .createObservableGauge('offsetsync_pending_translations', {
        description: 'Translations waiting for their record on the target.',
      })
      .addCallback((result) => result.observe(this.pendingKeys.size));
    this.heartbeat = {
      progress: () =>
        Progress.fromPartial({
          eventsByOutcome: Object.fromEntries(this.counts),
          pending: this.pendingKeys.size,
          lastEventAtMs: this.lastEventAtMs,
        }),
      problems: () => this.problems.list(),
    };
  }

  private get settings() {
    const settings = this.context.config.translator;
    if (settings === undefined) throw new Error('translator settings missing');
    return settings;
  }

  async start(): Promise<void> {
    const { names, config, nats, logger } = this.context;
    const target = this.settings.target;
    const jsm = await nats.jetstreamManager();
    const js = nats.jetstream();
    const sources = [...new Set(config.links.filter((l) => l.target === target).map((l) => l.source))];
    for (const source of sources) {
      const durable = `translator-${source}-${target}`;
      await provisionDurableConsumer(jsm, {
        stream: names.stream('committed'),
        durable,
        filterSubject: names.committedFilter(source),
        ackWaitMs: 30_000,
        maxAckPending: 20_000,
      });
      const consumer = new BatchConsumer({
        js,
        stream: names.stream('committed'),
        durable,
        maxBatch: 500,
        // A batch waits for the target's brokers and JetStream most of its time; the next need not.
        concurrency: BATCH_CONCURRENCY,
        logger,
        handle: (messages) => this.handleBatch(source, messages),
      });
      await consumer.start();
      this.consumers.push(consumer);
      logger.info({ source, target, durable }, 'translating offsets for link');
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.consumers.map((c) => c.stop()));
    this.publisher.close();
    await this.adapter.disconnect();
  }

  /** Handles one batch from one link's consumer. */
  private async handleBatch(source: string, messages: JsMsg[]): Promise<void> {
    const target = this.settings.target;
    // Only the newest event of each key matters; older ones in the same batch are done.
    const newest = new Map<string, JsMsg>();
    for (const message of messages) {
      const previous = newest.get(message.subject);
      if (previous === undefined || previous.seq < message.seq) {
        previous?.ack();
        newest.set(message.subject, message);
      } else {
        message.ack();
      }
    }
    const work: Work[] = [];
    for (const message of newest.values()) {
      if (message.headers?.get(EVENT_TYPE_HEADER) !== 'OffsetCommitted') {
        // Deletions need no translation; the committer does not delete offsets on targets.
        message.ack();
        continue;
      }
      let event: OffsetCommitted;
      try {
        event = OffsetCommitted.decode(message.data);
      } catch (error: unknown) {
        this.context.logger.error(
          { err: error, subject: message.subject },
          'undecodable OffsetCommitted event; dropped',
        );
        this.record('undecodable');
        message.term();
        continue;
      }
      const span = this.context.telemetry.tracer.startSpan(
        'offsetsync.translate',
        {
          kind: SpanKind.CONSUMER,
          attributes: {
            'offsetsync.source': source,
            'offsetsync.target': target,
            'offsetsync.group': event.group,
            'offsetsync.topic': event.topic,
            'offsetsync.partition': event.partition,
          },
        },
        extractTraceContext(message.headers),
      );
      work.push({ message, event, span, translation: decideWithoutTarget(event) });
    }

    try {
      await this.translate(
        source,
        work.filter((w) => w.translation === undefined),
      );
      this.problems.recover('locate anchors');
    } catch (error: unknown) {
      this.problems.fail(
        'locate anchors',
        toOffsetSyncError(error, { operation: 'locate anchors on the target' }),
      );
      for (const w of work) w.span.end();
      throw error;
    }
    await this.publish(source, work);
  }

  private async translate(source: string, work: Work[]): Promise<void> {
    if (work.length === 0) return;
    const target = this.settings.target;
    const request = (w: Work, role: 'next' | 'last'): LocateRequest | undefined => {
      const anchor = role === 'next' ? w.event.nextRecord : w.event.lastConsumed;
      if (anchor === undefined) return undefined;
      return {
        topic: w.event.topic,
        partition: w.event.partition,
        anchor,
        role,
        delta: this.deltas.get(source, target, w.event.topic, w.event.partition),
      };
    };
    // The next record decides alone when it is found; the last consumed record is looked for only when not.
    const nextRequests = work.map((w) => request(w, 'next'));
    const first = await this.locator.locate(nextRequests.filter((r): r is LocateRequest => r !== undefined));
    const nextLocations = new Map<Work, Location>();
    let i = 0;
    work.forEach((w, index) => {
      if (nextRequests[index] !== undefined) nextLocations.set(w, first.locations[i++]!);
    });
    const needLast = work.filter((w) => nextLocations.get(w)?.kind !== 'found');
    const lastRequests = needLast.map((w) => request(w, 'last'));
    const second = await this.locator.locate(lastRequests.filter((r): r is LocateRequest => r !== undefined));
    const lastLocations = new Map<Work, Location>();
    i = 0;
    needLast.forEach((w, index) => {
      if (lastRequests[index] !== undefined) lastLocations.set(w, second.locations[i++]!);
    });

    const anchorless = work.filter(
      (w) => w.event.nextRecord === undefined && w.event.lastConsumed === undefined,
    );
    const extraBounds = await this.locator.partitionBounds(
      anchorless.map((w) => ({ topic: w.event.topic, partition: w.event.partition })),
    );
    const fallbackAfter = this.settings.pendingFallbackAfterMs;
    for (const w of work) {
      const key = partitionKey(w.event.topic, w.event.partition);
      const bounds = first.bounds.get(key) ?? second.bounds.get(key) ?? extraBounds.get(key);
      const waited = Date.now() - w.event.observedAtMs;
      w.translation = decide(w.event, nextLocations.get(w), lastLocations.get(w), bounds, {
        fallBack: fallbackAfter > 0 && waited >= fallbackAfter,
        exhaustedFallsBack: w.message.info.redeliveryCount >= EXHAUSTED_ATTEMPTS_BEFORE_FALLBACK,
      });
      if (w.translation.learned !== undefined) {
        this.deltas.learn(
          source,
          target,
          w.event.topic,
          w.event.partition,
          w.translation.learned.anchor.offset,
          w.translation.learned.targetOffset,
        );
      }
    }
  }

  private async publish(source: string, work: Work[]): Promise<void> {
    const target = this.settings.target;
    const now = Date.now();
    const messages: StreamMessage[] = [];
    for (const w of work) {
      const t = w.translation;
      if (t === undefined) continue;
      const attempts = w.message.info.redeliveryCount;
      const event = OffsetTranslated.fromPartial({
        sourceCluster: source,
        targetCluster: target,
        group: w.event.group,
        topic: w.event.topic,
        partition: w.event.partition,
        sourceOffset: w.event.committedOffset,
        targetOffset: t.targetOffset,
        outcome: t.outcome,
        method: t.method,
        refusalReason: t.refusalReason,
        detail: t.detail,
        version: w.event.version,
        sourceCommitTimestampMs: w.event.commitTimestampMs,
        observedAtMs: w.event.observedAtMs,
        translatedAtMs: now,
        attempts,
      });
      const hdrs = headers();
      hdrs.set(EVENT_TYPE_HEADER, 'OffsetTranslated');
      injectTraceContext(hdrs, trace.setSpan(context.active(), w.span));
      const version = w.event.version;
      const pending = t.outcome === TranslationOutcome.TRANSLATION_OUTCOME_PENDING;
      messages.push({
        subject: this.context.names.translated(source, target, w.event),
        payload: OffsetTranslated.encode(event).finish(),
        // Each attempt of a pending translation is news for health; a final one is published once.
        msgId: `${source}:${target}:${version?.offsetsPartition ?? -1}:${version?.offsetsOffset ?? -1}:${pending ? `pending-${attempts}` : 'final'}`,
        headers: hdrs,
      });
      w.span.setAttribute('offsetsync.outcome', OUTCOME_NAMES[t.outcome] ?? 'unknown');
    }
    try {
      await publishAll(this.publisher, messages, { concurrency: 256 });
    } finally {
      for (const w of work) w.span.end();
    }
    for (const w of work) {
      const t = w.translation;
      if (t === undefined) continue;
      const key = w.message.subject;
      this.record(OUTCOME_NAMES[t.outcome] ?? 'unknown');
      if (t.outcome === TranslationOutcome.TRANSLATION_OUTCOME_PENDING) {
        this.pendingKeys.add(key);
        w.message.nak(this.retryDelay(w.message.info.redeliveryCount));
      } else {
        this.pendingKeys.delete(key);
        w.message.ack();
      }
    }
    this.lastEventAtMs = now;
  }

  /** Exponential backoff from pendingRetryMinMs to pendingRetryMaxMs by delivery attempt. */
  private retryDelay(attempt: number): number {
    const { pendingRetryMinMs, pendingRetryMaxMs } = this.settings;
    return Math.min(pendingRetryMaxMs, pendingRetryMinMs * 2 ** Math.max(0, Math.min(20, attempt - 1)));
  }
}
