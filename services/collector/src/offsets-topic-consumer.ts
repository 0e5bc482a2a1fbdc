// Reads the offsets topic as a member of the collector's consumer group: instances of the collector
// share the topic's partitions, and the group's committed position is the collector's progress. A batch
// counts as done only after the pipeline returns (every event acknowledged by JetStream); kafkajs then
// resolves and commits it. Read-committed isolation drops the offset commits of aborted transactions.
import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import { ErrorCodes, OffsetSyncError, type Logger } from '@offsetsync/common';
import type { RawOffsetsRecord } from './collector-pipeline.js';

export interface OffsetsTopicConsumerOptions {
  kafka: Kafka;
  groupId: string;
  topic: string;
  /** How long a fetch waits for records when none are there; also bounds how long commits coalesce. */
  maxWaitMs: number;
  /** Group session timeout: how soon the partitions of a vanished instance move to the others. */
  sessionTimeoutMs: number;
  handleBatch: (offsetsPartition: number, records: RawOffsetsRecord[]) => Promise<void>;
  logger: Logger;
  /** Called with a problem while the consumer cannot run, and with undefined once it runs again. */
  onProblem: (problem: OffsetSyncError | undefined) => void;
  /** Backoff between restarts after a crash. */
  retryMinMs?: number;
  retryMaxMs?: number;
}

/**
 * Runs the consumer until stopped, restarting it with exponential backoff whenever it cannot connect or
 * crashes (Kafka unreachable, coordinator moves): a clear log line each time, never a crash loop.
 */
export class OffsetsTopicConsumer {
  private consumer: Consumer | undefined;
  private stopping = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;

  constructor(private readonly options: OffsetsTopicConsumerOptions) {}

  start(): void {
    this.loop ??= this.runForever();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.consumer?.disconnect().catch(() => undefined);
    await this.loop;
  }

  private async runForever(): Promise<void> {
    const min = this.options.retryMinMs ?? 500;
    const max = this.options.retryMaxMs ?? 30_000;
    let delay = min;
    while (!this.stopping) {
      const crashed = await this.runOnce();
      if (this.stopping) break;
      this.options.onProblem(crashed);
      this.options.logger.error(
        { err: crashed, retryInMs: delay },
        `cannot read ${this.options.topic}; retrying`,
      );
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, delay).unref();
      });
      delay = Math.min(max, delay * 2);
    }
  }

  /** One consumer lifetime: resolves with the reason it ended. */
  private async runOnce(): Promise<OffsetSyncError> {
    const consumer = this.options.kafka.consumer({
      groupId: this.options.groupId,
      maxWaitTimeInMs: this.options.maxWaitMs,
      sessionTimeout: this.options.sessionTimeoutMs,
      heartbeatInterval: Math.max(100, Math.floor(this.options.sessionTimeoutMs / 10)),
      readUncommitted: false,
      allowAutoTopicCreation: false,
      // kafkajs restarts on retriable errors by itself; a crash it gives up on ends this lifetime.
      retry: { retries: 5, restartOnFailure: () => Promise.resolve(false) },
    });
    this.consumer = consumer;
    const ended = new Promise<OffsetSyncError>((resolve) => {
      consumer.on(consumer.events.CRASH, (event) => {
        resolve(
          new OffsetSyncError('the offsets-topic consumer crashed', {
            code: ErrorCodes.KAFKA_UNREACHABLE,
            cause: event.payload.error,
          }),
        );
      });
      consumer.on(consumer.events.GROUP_JOIN, (event) => {
        this.options.onProblem(undefined);
        this.options.logger.info(
          { assigned: event.payload.memberAssignment, generation: event.payload.groupProtocol },
          `reading ${this.options.topic} as a member of ${this.options.groupId}`,
        );
      });
    });
    try {
      await consumer.connect();
      await consumer.subscribe({ topic: this.options.topic, fromBeginning: true });
      await consumer.run({
        autoCommit: true,
        // Without an interval kafkajs commits after every batch: under load more OffsetCommits to the
        // source than the applications make. The position is only ever that of events JetStream has
        // acknowledged; a crash repeats up to a second of events, which their message ids deduplicate.
        autoCommitInterval: 1_000,
        eachBatchAutoResolve: true,
        partitionsConsumedConcurrently: 4,
        eachBatch: (payload) => this.eachBatch(payload),
      });
    } catch (error: unknown) {
      await consumer.disconnect().catch(() => undefined);
      return new OffsetSyncError(`cannot start reading ${this.options.topic}`, {
        code: ErrorCodes.KAFKA_UNREACHABLE,
        cause: error,
      });
    }
    const reason = await Promise.race([
      ended,
      new Promise<OffsetSyncError>((resolve) =>
        consumer.on(consumer.events.STOP, () =>
          resolve(new OffsetSyncError('consumer stopped', { code: ErrorCodes.LIFECYCLE })),
        ),
      ),
    ]);
    await consumer.disconnect().catch(() => undefined);
    return reason;
  }

  private async eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    const records: RawOffsetsRecord[] = batch.messages.map((message) => ({
      offset: Number(message.offset),
      key: message.key,
      value: message.value,
    }));
    await this.options.handleBatch(batch.partition, records);
    await payload.heartbeat();
  }
}
