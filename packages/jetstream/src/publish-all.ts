import type { MsgHdrs } from 'nats';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import type { JetStreamPublisher, PublishAck } from './jetstream-publisher.js';

/** One message for a JetStream stream. */
export interface StreamMessage {
  subject: string;
  payload: Uint8Array;
  /** Becomes `Nats-Msg-Id`: the stream drops a message whose id it saw within its duplicate window. */
  msgId: string;
  headers?: MsgHdrs;
}

/**
 * Publishes messages asynchronously, at most `concurrency` in flight, and resolves once JetStream has
 * acknowledged every one (acks in the order given). Any failure rejects with a retryable
 * NATS_UNREACHABLE error after the in-flight publishes settle: the caller retries the whole batch, and
 * the message ids make the retry harmless.
 */
export async function publishAll(
  publisher: JetStreamPublisher,
  messages: readonly StreamMessage[],
  options: { concurrency: number },
): Promise<PublishAck[]> {
  const acks: PublishAck[] = new Array<PublishAck>(messages.length);
  let next = 0;
  let failure: unknown;
  const lane = async (): Promise<void> => {
    while (failure === undefined && next < messages.length) {
      const index = next++;
      const message = messages[index]!;
      try {
        acks[index] = await publisher.publish(message.subject, message.payload, {
          msgId: message.msgId,
          ...(message.headers === undefined ? {} : { headers: message.headers }),
        });
      } catch (error: unknown) {
        failure ??= error;
      }
    }
  };
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(options.concurrency, messages.length)) }, lane),
  );
  if (failure !== undefined) {
    throw new OffsetSyncError(`JetStream did not acknowledge ${messages.length} message(s)`, {
      code: ErrorCodes.NATS_UNREACHABLE,
      retryable: true,
      cause: failure,
    });
  }
  return acks;
}
