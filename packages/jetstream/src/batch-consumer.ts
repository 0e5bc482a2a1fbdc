// A durable pull consumer shared by every instance of a service, handing its messages to a handler in
// batches: whatever arrived while the previous batch was being handled, up to a limit. Under low load a
// message is handled at once; under load batches grow and per-message costs (Kafka requests) are shared.
//
// The instance pulls only what it has room for (`maxHeld`): a backlog waits in the stream, where another
// instance can take it, rather than in this process past the ack wait (JetStream would then hand it out
// again and the work would be done twice).
//
// Up to `concurrency` batches are handled at once, so that a batch waiting for Kafka or JetStream does not
// hold up the next. Messages of one subject (one key) are never in two batches at once: a key's messages
// are handled, and their results published, in stream order.
import type { Consumer, ConsumerMessages, JetStreamClient, JsMsg } from 'nats';
import type { Logger } from 'pino';
import { errorCode, isRetryable, OffsetSyncError } from '@offsetsync/contracts';

export interface BatchConsumerOptions {
  js: JetStreamClient;
  stream: string;
  durable: string;
  /** Most messages handed to the handler at once. */
  maxBatch: number;
  /** Batches handled at once. Default: `1`. */
  concurrency?: number;
  /** Most messages received and not yet handed to the handler. Default: `(concurrency + 1) * maxBatch`. */
  maxHeld?: number;
  /**
   * Handles a batch and settles every message (ack, nak with a delay, or term). A rejection naks the
   * batch's unsettled messages with `retryDelayMs`, so the work is retried rather than lost.
   */
  handle: (messages: JsMsg[]) => Promise<void>;
  logger: Logger;
  retryDelayMs?: number;
  /**
   * Deliveries after which a message that fails on its own, with an error that is not retryable, is
   * terminated and handed to `onDeadLetter` instead of being redelivered again. Default: `5`.
   */
  maxDeliveries?: number;
  /** A message given up on (see `maxDeliveries`): count it and report it; it is not redelivered. */
  onDeadLetter?: (message: JsMsg, error: unknown) => void;
}

/** What becomes of the unsettled messages of a batch whose handler failed with `error`. */
export type FailedBatchStep =
  /** Handed back to be redelivered after the retry delay: a transient failure, never given up on. */
  | 'redeliver'
  /** Handled again one message at a time, so that one bad message does not fail the others. */
  | 'isolate'
  /** Terminated: a message that failed alone, not retryably, on its last allowed delivery. */
  | 'dead-letter';

/** The step after a failed batch of `size` unsettled messages (`deliveries`: of a lone message). Pure. */
export function failedBatchStep(
  size: number,
  retryable: boolean,
  deliveries: number,
  maxDeliveries: number,
): FailedBatchStep {
  if (retryable) return 'redeliver';
  if (size > 1) return 'isolate';
  return deliveries >= maxDeliveries ? 'dead-letter' : 'redeliver';
}

/** Whether nats.js has settled the message already (its JsMsgImpl tracks it; other messages: no). */
const settled = (message: JsMsg): boolean => (message as { didAck?: boolean }).didAck === true;

/** Deliveries of a message that fails alone before it is dead-lettered (BatchConsumerOptions.maxDeliveries). */
const DEFAULT_MAX_DELIVERIES = 5;

/** How long one pull request waits for messages before the next is sent (JetStream's minimum is 1 s). */
const PULL_EXPIRES_MS = 5_000;

/**
 * Takes the next batch out of `queue`: up to `maxBatch` messages, in queue order, of subjects not in
 * `busy`. The messages left behind keep their order.
 */
export function takeBatch<T extends { subject: string }>(
  queue: T[],
  maxBatch: number,
  busy: ReadonlySet<string>,
): T[] {
  const batch: T[] = [];
  const rest: T[] = [];
  for (const message of queue) {
    if (batch.length < maxBatch && !busy.has(message.subject)) batch.push(message);
    else rest.push(message);
  }
  queue.splice(0, queue.length, ...rest);
  return batch;
}

/** How many messages the next pull asks for: the room left, nothing when it is less than `minPull`. */
export function pullSize(held: number, maxHeld: number, minPull: number): number {
  const room = maxHeld - held;
  return room >= Math.min(minPull, maxHeld) ? room : 0;
}

export class BatchConsumer {
  private readonly queue: JsMsg[] = [];
  private readonly maxHeld: number;
  private readonly concurrency: number;
  /** Subjects of the batches being handled. */
  private readonly busy = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  /** Wakes the handler loop (a message arrived) and the pull loop (room was made). */
  private wakeProcess: (() => void) | undefined;
  private wakePull: (() => void) | undefined;
  private pulling: ConsumerMessages | undefined;
  private stopped = false;
  private loops: Promise<void> | undefined;
  /** Messages in the batches being handled. */
  private inHand = 0;
  /** Messages handled since start. */
  handled = 0;

  constructor(private readonly options: BatchConsumerOptions) {
    this.concurrency = Math.max(1, options.concurrency ?? 1);
    this.maxHeld = Math.max(options.maxHeld ?? options.maxBatch * (this.concurrency + 1), 1);
  }

  /** Messages this instance received and has not settled yet: waiting for a batch or being handled. */
  get held(): number {
    return this.queue.length + this.inHand;
  }

  async start(): Promise<void> {
    const consumer = await this.options.js.consumers.get(this.options.stream, this.options.durable);
    this.loops = Promise.all([this.receive(consumer), this.process()]).then(() => undefined);
  }

  /** Stops taking messages, finishes the batch in hand; unhandled messages are redelivered elsewhere. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.pulling?.stop();
    this.wakeProcess?.();
    this.wakePull?.();
    await this.loops;
    // Give back what was received but not handled, so another instance gets it now rather than after ack_wait.
    for (const message of this.queue.splice(0)) message.nak();
  }

  /** Pulls as many messages as there is room for, again and again, until stopped. */
  private async receive(consumer: Consumer): Promise<void> {
    // Small pulls while a batch is handled would make many tiny requests; wait for room for a batch.
    const minPull = Math.max(1, Math.floor(this.options.maxBatch / 2));
    while (!this.stopped) {
      const size = pullSize(this.queue.length, this.maxHeld, minPull);
      if (size === 0) {
        await new Promise<void>((resolve) => (this.wakePull = resolve));
        this.wakePull = undefined;
        continue;
      }
      try {
        this.pulling = await consumer.fetch({ max_messages: size, expires: PULL_EXPIRES_MS });
        // stop() may have run while the pull was being set up; it would otherwise wait for the expiry.
        if (this.stopped) this.pulling.stop();
        for await (const message of this.pulling) {
          if (this.stopped) {
            message.nak();
            continue;
          }
          this.queue.push(message);
          this.wakeProcess?.();
        }
      } catch (error: unknown) {
        if (this.stopped) break;
        this.options.logger.warn({ err: error, stream: this.options.stream }, 'pull failed; pulling again');
        await new Promise<void>((resolve) => setTimeout(resolve, this.options.retryDelayMs ?? 1000));
      } finally {
        this.pulling = undefined;
      }
    }
  }

  private async process(): Promise<void> {
    while (!this.stopped) {
      const batch =
        this.running.size < this.concurrency ? takeBatch(this.queue, this.options.maxBatch, this.busy) : [];
      if (batch.length === 0) {
        // Woken by a new message or a finished batch.
        await new Promise<void>((resolve) => (this.wakeProcess = resolve));
        this.wakeProcess = undefined;
        continue;
      }
      this.wakePull?.();
      const run = this.run(batch).finally(() => {
        this.running.delete(run);
        this.wakeProcess?.();
      });
      this.running.add(run);
    }
    await Promise.all(this.running);
  }

  /**
   * Handles messages; when that fails, settles those the handler did not: a transient failure hands them
   * back, a lasting one is narrowed down to the message that causes it, which is dead-lettered after
   * `maxDeliveries` (its batch-mates handled meanwhile). Never rejects.
   */
  private async handleOrSettle(messages: JsMsg[]): Promise<void> {
    try {
      await this.options.handle(messages);
    } catch (error: unknown) {
      const unsettled = messages.filter((m) => !settled(m));
      if (unsettled.length === 0) return;
      const step = failedBatchStep(
        unsettled.length,
        isRetryable(error),
        unsettled[0]!.info.redeliveryCount,
        this.options.maxDeliveries ?? DEFAULT_MAX_DELIVERIES,
      );
      switch (step) {
        case 'redeliver':
          this.options.logger.error(
            { err: error, messages: unsettled.length, stream: this.options.stream },
            'batch failed; its messages will be redelivered',
          );
          for (const message of unsettled) message.nak(this.options.retryDelayMs ?? 1000);
          return;
        case 'isolate':
          this.options.logger.warn(
            { err: error, messages: unsettled.length, stream: this.options.stream },
            'batch failed with an error that is not retryable; handling its messages one by one',
          );
          for (const message of unsettled) await this.handleOrSettle([message]);
          return;
        case 'dead-letter': {
          const [message] = unsettled;
          this.options.logger.error(
            {
              err: error,
              subject: message!.subject,
              deliveries: message!.info.redeliveryCount,
              stream: this.options.stream,
            },
            'message failed on every delivery; terminated (dead-lettered)',
          );
          // Without a reason: nats-server 2.9 ignores a +TERM that carries one.
          message!.term();
          this.options.onDeadLetter?.(message!, error);
          return;
        }
      }
    }
  }

  /** Handles one batch; never rejects. */
  private async run(batch: JsMsg[]): Promise<void> {
    const subjects = new Set(batch.map((m) => m.subject));
    for (const subject of subjects) this.busy.add(subject);
    this.inHand += batch.length;
    try {
      await this.handleOrSettle(batch);
    } finally {
      for (const subject of subjects) this.busy.delete(subject);
      this.inHand -= batch.length;
      this.handled += batch.length;
    }
  }
}

/**
 * The problem to file for a dead-lettered message: the handler's error (its code, or INTERNAL), naming
 * the message's subject as the resource and how often it was delivered.
 */
export function deadLetterProblem(message: JsMsg, error: unknown): OffsetSyncError {
  const why = error instanceof Error ? error.message : String(error);
  return new OffsetSyncError(`dead-lettered after ${message.info.redeliveryCount} deliveries: ${why}`, {
    code: errorCode(error),
    cause: error,
    details: { resource: `SUBJECT:${message.subject}` },
  });
}
