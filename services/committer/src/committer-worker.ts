// The committer worker: for each link whose target it serves, a durable pull consumer of translated
// offsets whose batches go through the commit pipeline (commit-pipeline.ts); one Kafka adapter for the
// target cluster, watched until it answers; the target partitions' log bounds and the refusals, shared
// by the pipelines; the heartbeat's progress and problems.
import { ConfigError, Progress } from '@offsetsync/contracts';
import {
  BatchConsumer,
  deadLetterProblem,
  JetStreamPublisher,
  committerConsumerSpec,
  provisionDurableConsumer,
  verifyDurableConsumer,
  publishAll,
} from '@offsetsync/jetstream';
import { KafkaAdapter } from '@offsetsync/kafka';
import {
  doublingBackoffMs,
  ProblemBoard,
  type CommitterConfig,
  type HeartbeatState,
  type LinkMode,
  type ServiceContext,
  type ServiceWorker,
} from '@offsetsync/runtime';
import type { JsMsg } from 'nats';
import { ActiveGroups } from './active-groups.js';
import { AppliedVersionsBucket } from './applied-versions-bucket.js';
import { KvAppliedVersionsStore } from './applied-versions-store.js';
import { CommitPipeline } from './commit-pipeline.js';
import { LogBoundsCache } from './log-bounds-cache.js';
import { OutcomeCounters } from './outcome-counters.js';
import { Refusals } from './refusals.js';
import { targetCommitTime } from './target-commit-time.js';

/** Batches handled at once (never two with the same key). */
const BATCH_CONCURRENCY = 4;
/** OffsetApplied events in flight at once while publishing a batch's events. */
const PUBLISH_CONCURRENCY = 256;

/** The committer's worker: intake from JetStream, lifecycle and heartbeat state around the pipelines. */
export class CommitterWorker implements ServiceWorker {
  private readonly settings: CommitterConfig;
  private readonly adapter: KafkaAdapter;
  private readonly counters: OutcomeCounters;
  private readonly activeGroups: ActiveGroups;
  /** The links this committer serves: their sources, and whether each commits or observes. */
  private readonly links: Array<{ source: string; mode: LinkMode }>;
  private readonly pipelines: CommitPipeline[] = [];
  private readonly consumers: BatchConsumer[] = [];
  private readonly problems = new ProblemBoard();
  private readonly logBounds: LogBoundsCache;
  private readonly refusals: Refusals;
  private connectionWatch: Promise<void> | undefined;
  private publisher: JetStreamPublisher | undefined;
  private stopping = false;
  private wakeWatch: (() => void) | undefined;
  readonly heartbeat: HeartbeatState;

  constructor(private readonly context: ServiceContext) {
    const settings = context.config.committer;
    if (settings === undefined) {
      throw new ConfigError([{ path: 'committer', message: 'required to run the committer service' }]);
    }
    const cluster = context.config.clusters[settings.target];
    if (cluster === undefined) {
      throw new ConfigError([
        { path: 'committer.target', message: `cluster '${settings.target}' is not configured` },
      ]);
    }
    this.settings = settings;
    this.adapter = new KafkaAdapter({
      cluster,
      clientId: cluster.clientId ?? `offsetsync-committer-${context.config.instance.id}`,
      logger: context.logger,
      groupConnections: settings.groupConnections,
    });
    this.counters = new OutcomeCounters(context.telemetry.meter);
    // One target cluster for every link: its partitions' bounds are the same whichever source they serve.
    this.logBounds = new LogBoundsCache((partitions) => this.adapter.partitionBounds(partitions));
    this.refusals = new Refusals({ logger: context.logger, problems: this.problems, clock: Date.now });
    this.activeGroups = new ActiveGroups(settings.activeGroupRetryMs);
    this.links = context.config.links
      .filter((l) => l.target === settings.target)
      .map(({ source, mode }) => ({ source, mode }));
    this.heartbeat = {
      progress: () => {
        const handled = this.pipelines.filter((p) => p.lastEventAtMs > 0);
        const latest = handled.reduce<CommitPipeline | undefined>(
          (a, p) => (a === undefined || p.lastEventAtMs > a.lastEventAtMs ? p : a),
          undefined,
        );
        return Progress.fromPartial({
          lastVersion: latest?.lastVersion,
          eventsByOutcome: this.counters.snapshot(),
          // Events this instance received and has not settled; those still in the stream are shared by
          // every instance and not counted here.
          pending: this.consumers.reduce((sum, consumer) => sum + consumer.held, 0),
          lastEventAtMs: latest?.lastEventAtMs ?? 0,
        });
      },
      problems: () => this.problems.list(),
    };
  }

  async start(): Promise<void> {
    const { config, names, nats, logger, telemetry } = this.context;
    const js = nats.jetstream();
    const jsm = await nats.jetstreamManager();
    const bucket = new AppliedVersionsBucket({
      name: names.bucket('applied-versions'),
      replicas: config.nats.streamReplicas,
      js,
      jsm,
      logger,
      mode: config.nats.provisioning,
    });
    await bucket.provision();
    const publisher = new JetStreamPublisher(nats);
    this.publisher = publisher;
    const store = new KvAppliedVersionsStore(publisher, names.bucket('applied-versions'), bucket);
    // Reaching the target is checked in the background: an unreachable cluster is reported in heartbeats
    // and retried, never a reason to exit.
    this.connectionWatch = this.watchConnection();
    const target = this.settings.target;
    const stream = names.stream('translated');
    for (const { source, mode } of this.links) {
      const spec = committerConsumerSpec(names, source, target, this.settings.ackWaitMs, mode);
      const durable = spec.durable;
      const action =
        config.nats.provisioning === 'create'
          ? await provisionDurableConsumer(jsm, spec)
          : await verifyDurableConsumer(jsm, spec);
      if (action === 'differs') {
        logger.warn(
          { durable },
          'durable consumer settings differ; run `offsetsync provision` to correct them',
        );
      }
      logger.info({ durable, stream, action, mode }, 'durable consumer ready');
      if (mode === 'observe')
        logger.warn({ source, target }, 'the link observes: nothing is committed on the target');
      const pipeline = new CommitPipeline({
        names,
        source,
        target,
        mode,
        store,
        cluster: this.adapter,
        publish: (messages) => publishAll(publisher, messages, { concurrency: PUBLISH_CONCURRENCY }),
        counters: this.counters,
        activeGroups: this.activeGroups,
        backoff: { minMs: this.settings.retryBackoffMinMs, maxMs: this.settings.retryBackoffMaxMs },
        tracer: telemetry.tracer,
        logger: logger.child({ source, target }),
        problems: this.problems,
        logBounds: this.logBounds,
        refusals: this.refusals,
        applicationCommitTime: (group, topic, partition, offset) =>
          targetCommitTime(jsm, names, target, { group, topic, partition }, offset),
      });
      const consumer = new BatchConsumer({
        js,
        stream,
        durable,
        maxBatch: this.settings.maxBatch,
        // A batch waits for the target's coordinators and JetStream most of its time; the next need not.
        concurrency: BATCH_CONCURRENCY,
        handle: (messages) => this.handle(pipeline, messages),
        logger,
        retryDelayMs: this.settings.retryBackoffMinMs,
        onDeadLetter: (message, error) => this.deadLettered(message, error),
      });
      await consumer.start();
      this.pipelines.push(pipeline);
      this.consumers.push(consumer);
    }
    logger.info({ target, links: this.links }, 'committer started');
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wakeWatch?.();
    await Promise.all(this.consumers.map((consumer) => consumer.stop()));
    await this.connectionWatch;
    this.publisher?.close();
    await this.adapter.disconnect();
  }

  private async handle(pipeline: CommitPipeline, messages: JsMsg[]): Promise<void> {
    try {
      await pipeline.handleBatch(messages);
      this.problems.recover('handle batch');
    } catch (error: unknown) {
      this.problems.fail('handle batch', error);
      throw error;
    }
  }

  /**
   * A translation that failed on every delivery, alone, with an error that is not retryable: terminated
   * by the consumer. Counted and filed (it stays on the heartbeat: the key syncs again with its next
   * translation).
   */
  private deadLettered(message: JsMsg, error: unknown): void {
    this.counters.add('dead_lettered');
    this.problems.fail('dead letters', deadLetterProblem(message, error));
  }

  /** Connects to the target until it answers, reporting KAFKA_UNREACHABLE meanwhile. */
  private async watchConnection(): Promise<void> {
    for (let attempt = 1; !this.stopping; attempt++) {
      try {
        await this.adapter.connect();
        this.problems.recover('connect');
        return;
      } catch (error: unknown) {
        if (this.stopping) return;
        const delayMs = doublingBackoffMs(attempt, {
          minMs: this.settings.retryBackoffMinMs,
          maxMs: this.settings.retryBackoffMaxMs,
        });
        this.problems.fail('connect', error);
        if (attempt === 1) {
          this.context.logger.warn({ err: error, delayMs }, 'cannot reach the target cluster; retrying');
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delayMs);
          this.wakeWatch = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    }
  }
}
