// The translator worker: for every link into its target, a durable pull consumer of OffsetCommitted events
// whose batches go through the translation pipeline (translation-pipeline.ts); one Kafka adapter and one
// anchor locator for the target cluster, shared by the links; lifecycle, metrics and the heartbeat's
// progress and problems. Pending translations are retried with backoff (nak with a delay) until the
// record arrives; newer commits of the same key supersede them. Every translator.revisionIntervalMs the
// pipelines revise the translations they watch (pipeline/revisions.ts), one pass at a time.
import type { JsMsg } from 'nats';
import { ConfigError, Progress } from '@offsetsync/contracts';
import {
  BatchConsumer,
  deadLetterProblem,
  JetStreamPublisher,
  LastOnSubject,
  provisionDurableConsumer,
  translatorConsumerSpec,
  verifyDurableConsumer,
  publishNewest,
} from '@offsetsync/jetstream';
import { KafkaAdapter } from '@offsetsync/kafka';
import {
  linkFilter,
  ProblemBoard,
  type HeartbeatState,
  type ServiceContext,
  type ServiceWorker,
  type TranslatorConfig,
} from '@offsetsync/runtime';
import { AnchorLocator } from './anchor-locator.js';
import { PositionMemory } from './position-memory.js';
import { translationOrder, type TranslationRank } from './pipeline/publish.js';
import { TranslationPipeline } from './translation-pipeline.js';

/** Batches translated at once (never two with the same key). */
const BATCH_CONCURRENCY = 4;
/** OffsetTranslated events in flight at once while publishing a batch's events. */
const PUBLISH_CONCURRENCY = 256;
/**
 * Keys whose last translation in the stream this instance remembers (a few hundred bytes each): a
 * publish of such a key needs no read first while no other instance wrote it meanwhile.
 */
const KNOWN_TRANSLATIONS = 100_000;
/** Translations each link watches for a revision at most (the oldest go first). */
const WATCHED_TRANSLATIONS = 100_000;

/** The translator's worker: intake from JetStream, lifecycle and heartbeat state around the pipelines. */
export class TranslatorWorker implements ServiceWorker {
  private readonly settings: TranslatorConfig;
  private readonly adapter: KafkaAdapter;
  private readonly publisher: JetStreamPublisher;
  private readonly locator: AnchorLocator;
  private readonly positions = new PositionMemory();
  private readonly knownTranslations = new LastOnSubject<TranslationRank>(KNOWN_TRANSLATIONS);
  private readonly pipelines: TranslationPipeline[] = [];
  private readonly consumers: BatchConsumer[] = [];
  private readonly counts = new Map<string, number>();
  private readonly problems = new ProblemBoard();
  private readonly record: (outcome: string) => void;
  private revisionTimer: NodeJS.Timeout | undefined;
  /** The revision pass running now, if any. */
  private revising: Promise<void> | undefined;
  readonly heartbeat: HeartbeatState;

  constructor(private readonly context: ServiceContext) {
    const settings = context.config.translator;
    if (settings === undefined) {
      throw new ConfigError([{ path: 'translator', message: 'required to run the translator service' }]);
    }
    const cluster = context.config.clusters[settings.target];
    if (cluster === undefined) {
      throw new ConfigError([
        { path: 'translator.target', message: `cluster '${settings.target}' is not configured` },
      ]);
    }
    this.settings = settings;
    this.adapter = new KafkaAdapter({
      cluster,
      clientId: `offsetsync-translator-${context.config.instance.id}`,
      logger: context.logger,
    });
    this.publisher = new JetStreamPublisher(context.nats);
    this.locator = new AnchorLocator(this.adapter, {
      probeWindow: settings.probeWindow,
      scanLimit: settings.scanLimit,
      duplicateWindow: settings.duplicateWindow,
      cacheSize: settings.cacheSize,
      recordCacheBytes: settings.recordCacheBytes,
    });
    const outcomes = context.telemetry.meter.createCounter('offsetsync_translations', {
      description:
        'Translations by outcome (exact, inexact, pending, refused; undecodable and superseded events; revised: a translation revised forward).',
    });
    this.record = (outcome) => {
      this.counts.set(outcome, (this.counts.get(outcome) ?? 0) + 1);
      outcomes.add(1, { outcome });
    };
    context.telemetry.meter
      .createObservableGauge('offsetsync_pending_translations', {
        description: 'Translations waiting for their record on the target.',
      })
      .addCallback((result) => result.observe(this.pendingCount()));
    this.heartbeat = {
      progress: () =>
        Progress.fromPartial({
          eventsByOutcome: Object.fromEntries(this.counts),
          pending: this.pendingCount(),
          lastEventAtMs: Math.max(0, ...this.pipelines.map((p) => p.lastEventAtMs)),
        }),
      problems: () => this.problems.list(),
    };
  }

  async start(): Promise<void> {
    const { names, config, nats, logger, telemetry } = this.context;
    const target = this.settings.target;
    const jsm = await nats.jetstreamManager();
    const js = nats.jetstream();
    const sources = [...new Set(config.links.filter((l) => l.target === target).map((l) => l.source))];
    for (const source of sources) {
      const spec = translatorConsumerSpec(names, source, target);
      const durable = spec.durable;
      if (config.nats.provisioning === 'create') await provisionDurableConsumer(jsm, spec);
      else if ((await verifyDurableConsumer(jsm, spec)) === 'differs') {
        logger.warn(
          { durable },
          'durable consumer settings differ; run `offsetsync provision` to correct them',
        );
      }
      // Duplicate links are refused at load, so there is one per source.
      const link = config.links.find((l) => l.source === source && l.target === target);
      const pipeline = new TranslationPipeline({
        names,
        source,
        target,
        topicNames: link?.topicNames,
        filter: link === undefined ? undefined : linkFilter(link),
        locator: this.locator,
        positions: this.positions,
        publish: (messages) =>
          publishNewest(this.publisher, messages, {
            stream: names.stream('translated'),
            order: translationOrder,
            known: this.knownTranslations,
            concurrency: PUBLISH_CONCURRENCY,
          }),
        pendingFallbackAfterMs: this.settings.pendingFallbackAfterMs,
        pendingRetry: { minMs: this.settings.pendingRetryMinMs, maxMs: this.settings.pendingRetryMaxMs },
        revisions: {
          windowMs: this.settings.revisionWindowMs,
          intervalMs: this.settings.revisionIntervalMs,
          maxWatched: WATCHED_TRANSLATIONS,
        },
        tracer: telemetry.tracer,
        logger,
        record: this.record,
        problems: this.problems,
      });
      const consumer = new BatchConsumer({
        js,
        stream: names.stream('committed'),
        durable,
        maxBatch: 500,
        // A batch waits for the target's brokers and JetStream most of its time; the next need not.
        concurrency: BATCH_CONCURRENCY,
        logger,
        handle: (messages) => this.handle(pipeline, messages),
        onDeadLetter: (message, error) => this.deadLettered(message, error),
      });
      await consumer.start();
      this.pipelines.push(pipeline);
      this.consumers.push(consumer);
      logger.info({ source, target, durable }, 'translating offsets for link');
    }
    if (this.settings.revisionWindowMs > 0) {
      this.revisionTimer = setInterval(() => {
        this.revising ??= this.revise().finally(() => {
          this.revising = undefined;
        });
      }, this.settings.revisionIntervalMs);
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.revisionTimer);
    await this.revising;
    await Promise.all(this.consumers.map((c) => c.stop()));
    this.publisher.close();
    await this.adapter.disconnect();
  }

  /** Handles one batch of one link; a batch that fails for any reason is a problem until one succeeds. */
  private async handle(pipeline: TranslationPipeline, messages: JsMsg[]): Promise<void> {
    try {
      await pipeline.handleBatch(messages);
      this.problems.recover('handle batch');
    } catch (error: unknown) {
      this.problems.fail('handle batch', error);
      throw error;
    }
  }

  /**
   * A commit that failed on every delivery, alone, with an error that is not retryable: terminated by the
   * consumer. Counted and filed (it stays on the heartbeat: the key syncs again only with its next commit).
   */
  private deadLettered(message: JsMsg, error: unknown): void {
    this.record('dead_lettered');
    this.problems.fail('dead letters', deadLetterProblem(message, error));
  }

  /** One revision pass over every link; a link that fails is logged and reported (the pipeline files it). */
  private async revise(): Promise<void> {
    for (const pipeline of this.pipelines) {
      try {
        await pipeline.revise();
      } catch (error: unknown) {
        this.context.logger.warn({ err: error }, 'revising translations failed; trying again later');
      }
    }
  }

  /** Keys waiting for their record on the target, over every link. */
  private pendingCount(): number {
    return this.pipelines.reduce((sum, p) => sum + p.pending.size, 0);
  }
}
