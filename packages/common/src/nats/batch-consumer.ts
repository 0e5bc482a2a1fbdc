// A durable pull consumer shared by every instance of a service, handing its messages to a handler in
// batches: whatever arrived while the previous batch was being handled, up to a limit. Under low load a
// message is handled at once; under load batches grow and per-message costs (Kafka requests) are shared.
import type { ConsumerMessages, JetStreamClient, JsMsg } from 'nats';
import type { Logger } from 'pino';

export interface BatchConsumerOptions {
  js: JetStreamClient;
  stream: string;
  durable: string;
  /** Most messages handed to the handler at once. */
  maxBatch: number;
  /**
   * Handles a batch and settles every message (ack, nak with a delay, or term). A rejection naks the
   * batch's unsettled messages with `retryDelayMs`, so the work is retried rather than lost.
   */
  handle: (messages: JsMsg[]) => Promise<void>;
  logger: Logger;
  retryDelayMs?: number;
}

export class BatchConsumer {
  private readonly queue: JsMsg[] = [];
  private notify: (() => void) | undefined;
  private subscription: ConsumerMessages | undefined;
  private stopped = false;
  private loops: Promise<void> | undefined;
  /** Messages handled since start. */
  handled = 0;

  constructor(private readonly options: BatchConsumerOptions) {}

  async start(): Promise<void> {
    const consumer = await this.options.js.consumers.get(this.options.stream, this.options.durable);
    this.subscription = await consumer.consume({ max_messages: Math.max(this.options.maxBatch * 2, 64) });
    this.loops = Promise.all([this.receive(this.subscription), this.process()]).then(() => undefined);
  }

  /** Stops taking messages, finishes the batch in hand; unhandled messages are redelivered elsewhere. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.subscription?.stop();
    this.notify?.();
    await this.loops;
    // Give back what was received but not handled, so another instance gets it now rather than after ack_wait.
    for (const message of this.queue.splice(0)) message.nak();
  }

  private async receive(messages: ConsumerMessages): Promise<void> {
    for await (const message of messages) {
      this.queue.push(message);
      this.notify?.();
    }
  }

  private async process(): Promise<void> {
    while (!this.stopped) {
      if (this.queue.length === 0) {
        await new Promise<void>((resolve) => (this.notify = resolve));
        this.notify = undefined;
        continue;
      }
      const batch = this.queue.splice(0, this.options.maxBatch);
      try {
        await this.options.handle(batch);
      } catch (error: unknown) {
        this.options.logger.error(
          { err: error, messages: batch.length, stream: this.options.stream },
          'batch failed; its messages will be redelivered',
        );
        for (const message of batch) message.nak(this.options.retryDelayMs ?? 1000);
      }
      this.handled += batch.length;
    }
  }
}
