// The collector worker: reads the source cluster's offsets topic and publishes anchored events. The worker
// owns intake (the offsets-topic consumer), acknowledgement (a chunk counts as done, and its position may
// be committed, only once the pipeline returned: every event acknowledged by JetStream), lifecycle and what
// the heartbeats say; the pipeline (collector-pipeline.ts) does the work on each chunk.
import { ConfigError, Progress, type Version } from '@offsetsync/contracts';
import { JetStreamPublisher, publishAll } from '@offsetsync/jetstream';
import { KafkaAdapter } from '@offsetsync/kafka';
import {
  ProblemBoard,
  type HeartbeatState,
  type ServiceContext,
  type ServiceWorker,
} from '@offsetsync/runtime';
import { AnchorResolver } from './anchor-resolver.js';
import { CollectorPipeline } from './collector-pipeline.js';
import { createCommitFilter } from './commit-filter.js';
import { KafkaRecordSource } from './kafka-record-source.js';
import { OffsetsTopicConsumer, type OffsetsTopicConsumerOptions } from './offsets-topic-consumer.js';
import type { RawOffsetsRecord } from './offsets-topic-decoder.js';
import { OutcomeCounters } from './outcome-counters.js';

/** Heartbeat problem areas: each is cleared when its own work succeeds again, whatever its code was. */
const READ_AREA = 'read offsets topic';
const HANDLE_AREA = 'handle batch';

/** What the intake calls: a handler for every chunk, and whether it can read. */
export type IntakeHandlers = Pick<OffsetsTopicConsumerOptions, 'handleBatch' | 'onProblem'>;

/** The reading side of the worker: the offsets-topic consumer, or a stand-in in tests. */
export interface Intake {
  start(): void;
  stop(): Promise<void>;
}

/** What the worker drives; {@link createCollectorWorker} builds them from the service context. */
export interface CollectorWorkerParts {
  /** Handles a chunk; resolves once JetStream acknowledged its events. */
  pipeline: Pick<CollectorPipeline, 'handleBatch' | 'lastEventAtMs'>;
  /** The outcome counts the heartbeats report. */
  counters: Pick<OutcomeCounters, 'snapshot'>;
  /** Creates the intake, which hands every chunk it reads to `handlers.handleBatch`. */
  createIntake: (handlers: IntakeHandlers) => Intake;
  /** Releases the clients, once the intake stopped. */
  close: () => Promise<void>;
}

/**
 * The collector's worker: reads the offsets topic (intake), hands each chunk to the pipeline, lets the
 * consumer commit a chunk's position only after JetStream acknowledged its events, and reports progress
 * and problems in the heartbeats.
 */
export class CollectorWorker implements ServiceWorker {
  private readonly parts: CollectorWorkerParts;
  private readonly intake: Intake;
  private readonly problems = new ProblemBoard();
  /** The newest offsets-topic position whose events JetStream acknowledged. */
  private lastAcknowledged: Version | undefined;
  readonly heartbeat: HeartbeatState;

  constructor(parts: CollectorWorkerParts) {
    this.parts = parts;
    this.intake = parts.createIntake({
      handleBatch: (partition, records) => this.acknowledge(partition, records),
      onProblem: (problem) =>
        problem === undefined ? this.problems.recover(READ_AREA) : this.problems.fail(READ_AREA, problem),
    });
    this.heartbeat = {
      progress: () =>
        Progress.fromPartial({
          lastVersion: this.lastAcknowledged,
          eventsByOutcome: parts.counters.snapshot(),
          pending: 0,
          lastEventAtMs: parts.pipeline.lastEventAtMs,
        }),
      problems: () => this.problems.list(),
    };
  }

  start(): Promise<void> {
    // Reading starts in the background: an unreachable cluster is retried and reported in heartbeats,
    // never a reason to exit.
    this.intake.start();
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    await this.intake.stop();
    await this.parts.close();
  }

  /**
   * Runs the pipeline on a chunk. Resolving lets the consumer commit the chunk's position; rejecting makes
   * kafkajs read it again (and, after its retries, restart the consumer).
   */
  private async acknowledge(offsetsPartition: number, records: RawOffsetsRecord[]): Promise<void> {
    try {
      await this.parts.pipeline.handleBatch(offsetsPartition, records);
    } catch (error: unknown) {
      this.problems.fail(HANDLE_AREA, error);
      throw error;
    }
    this.problems.recover(HANDLE_AREA);
    const last = records[records.length - 1];
    if (last !== undefined) this.lastAcknowledged = { offsetsPartition, offsetsOffset: last.offset };
  }
}

/** The collector's worker with its real parts: the Kafka adapter, the JetStream publisher, the pipeline. */
export function createCollectorWorker(context: ServiceContext): CollectorWorker {
  const settings = context.config.collector;
  if (settings === undefined) {
    throw new ConfigError([{ path: 'collector', message: 'required to run the collector service' }]);
  }
  const cluster = context.config.clusters[settings.cluster];
  if (cluster === undefined) {
    throw new ConfigError([
      { path: 'collector.cluster', message: `cluster '${settings.cluster}' is not configured` },
    ]);
  }
  const logger = context.logger;
  const publisher = new JetStreamPublisher(context.nats);
  const adapter = new KafkaAdapter({
    cluster,
    clientId: `offsetsync-collector-${context.config.instance.id}`,
    logger,
  });
  const counters = new OutcomeCounters(context.telemetry.meter);
  const pipeline = new CollectorPipeline({
    names: context.names,
    source: settings.cluster,
    filter: createCommitFilter(settings),
    resolver: new AnchorResolver(new KafkaRecordSource(adapter), {
      cacheSize: settings.anchorCacheSize,
      distinctCheckRecords: settings.distinctCheckRecords,
    }),
    publish: (messages) => publishAll(publisher, messages, { concurrency: settings.publishConcurrency }),
    counters,
    logger,
    tracer: context.telemetry.tracer,
  });
  return new CollectorWorker({
    pipeline,
    counters,
    createIntake: (handlers) =>
      new OffsetsTopicConsumer({
        kafka: adapter.kafka,
        groupId: settings.consumerGroup,
        topic: settings.offsetsTopic,
        maxWaitMs: settings.fetchMaxWaitMs,
        sessionTimeoutMs: settings.sessionTimeoutMs,
        explainMissingCoordinator: async () => {
          await adapter.fetchCommittedOffsets(settings.consumerGroup, []);
        },
        logger,
        ...handlers,
      }),
    close: async () => {
      publisher.close();
      await adapter.disconnect();
    },
  });
}
