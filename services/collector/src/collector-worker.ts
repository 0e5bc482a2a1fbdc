// The collector worker: reads the source cluster's offsets topic and publishes anchored events.
import { Progress } from '@offsetsync/contracts';
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
import { OffsetsTopicConsumer } from './offsets-topic-consumer.js';
import type { RawOffsetsRecord } from './offsets-topic-decoder.js';
import { OutcomeCounters } from './outcome-counters.js';

/**
 * The collector's worker: reads the offsets topic (intake), hands each chunk to the pipeline, lets the
 * consumer commit a chunk's position only after JetStream acknowledged its events, and reports progress
 * and problems in the heartbeats.
 */
export class CollectorWorker implements ServiceWorker {
  private readonly adapter: KafkaAdapter;
  private readonly publisher: JetStreamPublisher;
  private readonly pipeline: CollectorPipeline;
  private readonly consumer: OffsetsTopicConsumer;
  private readonly counters: OutcomeCounters;
  private readonly problems = new ProblemBoard();
  private lastHandled: { offsetsPartition: number; offsetsOffset: number } | undefined;
  readonly heartbeat: HeartbeatState;

  constructor(context: ServiceContext) {
    const settings = context.config.collector;
    if (settings === undefined) throw new Error('the collector needs the collector section of the config');
    const cluster = context.config.clusters[settings.cluster];
    if (cluster === undefined) throw new Error(`cluster '${settings.cluster}' is not configured`);
    const logger = context.logger;
    this.publisher = new JetStreamPublisher(context.nats);
    const publisher = this.publisher;
    this.adapter = new KafkaAdapter({
      cluster,
      clientId: `offsetsync-collector-${context.config.instance.id}`,
      logger,
    });
    this.counters = new OutcomeCounters(context.telemetry.meter);
    this.pipeline = new CollectorPipeline({
      names: context.names,
      source: settings.cluster,
      filter: createCommitFilter(settings),
      resolver: new AnchorResolver(new KafkaRecordSource(this.adapter), {
        cacheSize: settings.anchorCacheSize,
      }),
      publish: (messages) => publishAll(publisher, messages, { concurrency: settings.publishConcurrency }),
      counters: this.counters,
      logger,
      tracer: context.telemetry.tracer,
    });
    this.consumer = new OffsetsTopicConsumer({
      kafka: this.adapter.kafka,
      groupId: settings.consumerGroup,
      topic: settings.offsetsTopic,
      maxWaitMs: settings.fetchMaxWaitMs,
      sessionTimeoutMs: settings.sessionTimeoutMs,
      handleBatch: (partition, records) => this.handleBatch(partition, records),
      logger,
      onProblem: (problem) =>
        problem === undefined
          ? this.problems.recover('read offsets topic')
          : this.problems.fail('read offsets topic', problem),
    });
    this.heartbeat = {
      progress: () =>
        Progress.fromPartial({
          lastVersion: this.lastHandled,
          eventsByOutcome: this.counters.snapshot(),
          pending: 0,
          lastEventAtMs: this.pipeline.lastEventAtMs,
        }),
      problems: () => this.problems.list(),
    };
  }

  start(): Promise<void> {
    // Reading starts in the background: an unreachable cluster is retried and reported in heartbeats,
    // never a reason to exit.
    this.consumer.start();
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    await this.consumer.stop();
    this.publisher.close();
    await this.adapter.disconnect();
  }

  private async handleBatch(offsetsPartition: number, records: RawOffsetsRecord[]): Promise<void> {
    try {
      await this.pipeline.handleBatch(offsetsPartition, records);
      this.problems.recover('handle batch');
      const last = records[records.length - 1];
      if (last !== undefined) this.lastHandled = { offsetsPartition, offsetsOffset: last.offset };
    } catch (error: unknown) {
      this.problems.fail('handle batch', error);
      throw error;
    }
  }
}
