// Reads the offsets topic as a member of the collector's consumer group: instances of the collector
// share the topic's partitions, and the group's committed position is the collector's progress. A batch
// counts as done only after the pipeline returns (every event acknowledged by JetStream); kafkajs then
// resolves and commits it. Read-committed isolation drops the offset commits of aborted transactions.
import kafkajs, { type Consumer, type EachBatchPayload, type Kafka } from 'kafkajs';
import { ErrorCodes, isOffsetSyncError, OffsetSyncError, type ErrorCode } from '@offsetsync/contracts';
import { toOffsetSyncError } from '@offsetsync/kafka';
import { doublingBackoffMs, type Logger } from '@offsetsync/runtime';
import type { RawOffsetsRecord } from './offsets-topic-decoder.js';

const { KafkaJSError, KafkaJSNonRetriableError } = kafkajs;

/** Options of {@link OffsetsTopicConsumer}. */
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
  /**
   * Asks the group's coordinator directly why it could not be found. kafkajs reports a refused
   * FindCoordinator (a missing group ACL) as "Failed to find group coordinator" without the broker's
   * error; this call (the project's own Kafka layer, an OffsetFetch of the group) rejects with the
   * classified error, which is then reported instead. Default: none, kafkajs' error is reported.
   */
  explainMissingCoordinator?: () => Promise<void>;
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
  /** Whether the current consumer lifetime joined the group: its failure starts the backoff again. */
  private joined = false;

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
    const backoff = { minMs: this.options.retryMinMs ?? 500, maxMs: this.options.retryMaxMs ?? 30_000 };
    let failuresInARow = 0;
    while (!this.stopping) {
      this.joined = false;
      const crashed = await this.explained(await this.runOnce());
      if (this.stopping) break;
      // A lifetime that joined the group ends a run of failures: its failure is retried soon again.
      failuresInARow = this.joined ? 1 : failuresInARow + 1;
      const retryInMs = doublingBackoffMs(failuresInARow, backoff);
      this.options.onProblem(crashed);
      this.options.logger.error({ err: crashed, retryInMs }, `cannot read ${this.options.topic}; retrying`);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, retryInMs).unref();
      });
    }
  }

  /** `crashed`, or the real reason when it is kafkajs' coordinator-not-found and the coordinator says more. */
  private async explained(crashed: OffsetSyncError): Promise<OffsetSyncError> {
    const explain = this.options.explainMissingCoordinator;
    if (explain === undefined || !wrapsMissingCoordinator(crashed)) return crashed;
    try {
      await explain();
    } catch (error: unknown) {
      if (isOffsetSyncError(error) && error.code === ErrorCodes.NOT_AUTHORIZED) {
        // The explaining call needs less than a member of the group does: name what the member needs.
        const named = error.details?.resource;
        const resource = typeof named === 'string' ? named : `GROUP:${this.options.groupId}`;
        const missingAcl = `ALLOW READ on ${resource}`;
        // The cause is kafkajs' failure: the explaining call's own refusal (of a DESCRIBE) would mislead.
        const group = this.options.groupId;
        return new OffsetSyncError(`cannot join ${group}: not authorized: missing ACL ${missingAcl}`, {
          code: error.code,
          cause: crashed.cause,
          details: { ...error.details, resource, aclOperation: 'READ', missingAcl },
        });
      }
    }
    return crashed;
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
          new OffsetSyncError(`the offsets-topic consumer crashed${this.aclNote(event.payload.error)}`, {
            code: consumerFailureCode(event.payload.error),
            cause: event.payload.error,
            details: this.failureDetails(event.payload.error),
          }),
        );
      });
      consumer.on(consumer.events.GROUP_JOIN, (event) => {
        this.joined = true;
        this.options.onProblem(undefined);
        this.options.logger.info(
          { assigned: event.payload.memberAssignment, groupProtocol: event.payload.groupProtocol },
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
        // handleInChunks resolves each chunk itself; a batch cut short is not resolved past its last chunk.
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: 4,
        eachBatch: (payload) => this.eachBatch(payload),
      });
    } catch (error: unknown) {
      await consumer.disconnect().catch(() => undefined);
      return new OffsetSyncError(`cannot start reading ${this.options.topic}${this.aclNote(error)}`, {
        code: consumerFailureCode(error),
        cause: error,
        details: this.failureDetails(error),
      });
    }
    const reason = await Promise.race([
      ended,
      new Promise<OffsetSyncError>((resolve) =>
        consumer.on(consumer.events.STOP, () => {
          if (this.stopping) resolve(new OffsetSyncError('consumer stopped', { code: ErrorCodes.LIFECYCLE }));
          // kafkajs disconnects a crashed consumer (STOP) before it reports the crash: the crash is the reason.
          else setTimeout(() => resolve(stoppedUnasked()), CRASH_REPORT_GRACE_MS).unref();
        }),
      ),
    ]);
    await consumer.disconnect().catch(() => undefined);
    return reason;
  }

  /** A failure's resource and missing ACL, about this consumer's group and topic. */
  private failureDetails(error: unknown): Record<string, unknown> {
    return classifyConsumerFailure(error, { groupId: this.options.groupId, topic: this.options.topic })
      .details;
  }

  /** ": not authorized: missing ACL ALLOW READ on GROUP:g" when the failure is a missing ACL. */
  private aclNote(error: unknown): string {
    const acl = this.failureDetails(error).missingAcl;
    return typeof acl === 'string' ? `: not authorized: missing ACL ${acl}` : '';
  }

  private eachBatch(payload: EachBatchPayload): Promise<void> {
    return handleInChunks(payload, MAX_RECORDS_AT_ONCE, this.options.handleBatch);
  }
}

/** How long a consumer kafkajs stopped by itself is given to report its crash. */
const CRASH_REPORT_GRACE_MS = 1_000;

function stoppedUnasked(): OffsetSyncError {
  return new OffsetSyncError('the offsets-topic consumer stopped without reporting why', {
    code: ErrorCodes.KAFKA_BROKER_ERROR,
  });
}

/** Whether `error` is, or wraps, kafkajs' "Failed to find group coordinator". */
function wrapsMissingCoordinator(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause)
    if (e.name === 'KafkaJSGroupCoordinatorNotFound') return true;
  return false;
}

/**
 * The code a failure of the offsets-topic consumer is reported under: that of the error beneath kafkajs'
 * retry wrappers (kafkajs retries a failed batch handler, then crashes with the handler's error inside).
 * The pipeline's own errors keep their code, so a publish JetStream did not acknowledge is reported as
 * NATS_UNREACHABLE, not as an unreachable Kafka; kafkajs' errors are classified as the Kafka adapter
 * classifies them (KAFKA_UNREACHABLE, KAFKA_BROKER_ERROR, ...); anything else is a bug: INTERNAL.
 */
export function consumerFailureCode(error: unknown): ErrorCode {
  return classifyConsumerFailure(error, {}).code;
}

/**
 * The classified failure beneath kafkajs' wrappers, as {@link consumerFailureCode} says; for a missing ACL
 * its details name the resource and the ACL to grant (`ALLOW READ on GROUP:offsetsync-collector-src`).
 */
export function classifyConsumerFailure(
  error: unknown,
  details: { groupId?: string; topic?: string },
): { code: ErrorCode; details: Record<string, unknown> } {
  let beneath = error;
  while (beneath instanceof KafkaJSNonRetriableError && beneath.cause instanceof Error)
    beneath = beneath.cause;
  if (isOffsetSyncError(beneath)) return { code: beneath.code, details: beneath.details ?? {} };
  if (beneath instanceof KafkaJSError) {
    const mapped = toOffsetSyncError(beneath, { operation: 'consume', details });
    return { code: mapped.code, details: mapped.details ?? {} };
  }
  return { code: ErrorCodes.INTERNAL, details: {} };
}

/**
 * Most offsets-topic records one partition hands to the pipeline at once. A fetch returns up to 1 MiB per
 * partition, some 10,000 commits when a backlog is read (a start, a catch-up); every commit becomes an event
 * with its span, headers and payload held until JetStream acknowledged it, a few KB each. In chunks, memory
 * stays bounded by this many events per partition read concurrently, whatever the backlog.
 */
const MAX_RECORDS_AT_ONCE = 2_000;

/** The parts of kafkajs' EachBatchPayload that handleInChunks uses. */
export interface ChunkedBatch {
  batch: {
    partition: number;
    messages: ReadonlyArray<{ offset: string; key: Buffer | null; value: Buffer | null }>;
    /** The batch's last offset, control records (transaction markers) included. */
    lastOffset(): string;
  };
  resolveOffset(offset: string): void;
  heartbeat(): Promise<void>;
  isRunning(): boolean;
  isStale(): boolean;
}

/**
 * Hands a fetched batch to `handle` in chunks of at most `chunkSize` records, in order. After each chunk
 * its last offset is resolved, so it may be committed (after the last chunk the batch's last offset, past
 * any trailing transaction marker), and the group heartbeat is sent. Stops between chunks when the consumer
 * stops or the partition was reassigned: the rest is fetched again from the resolved position.
 */
export async function handleInChunks(
  payload: ChunkedBatch,
  chunkSize: number,
  handle: (offsetsPartition: number, records: RawOffsetsRecord[]) => Promise<void>,
): Promise<void> {
  const { partition, messages } = payload.batch;
  for (let start = 0; start < messages.length; start += chunkSize) {
    if (!payload.isRunning() || payload.isStale()) return;
    const chunk = messages.slice(start, start + chunkSize);
    await handle(
      partition,
      chunk.map((message) => ({ offset: Number(message.offset), key: message.key, value: message.value })),
    );
    const last = start + chunkSize >= messages.length;
    payload.resolveOffset(last ? payload.batch.lastOffset() : chunk[chunk.length - 1]!.offset);
    await payload.heartbeat();
  }
}
