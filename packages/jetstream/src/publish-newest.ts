// Publishes to a stream that keeps the last message per subject (max_msgs_per_subject=1), so that the
// subject's message is its key's current state, without ever replacing that message with an older one.
// Several instances share a durable consumer: what they publish arrives in no particular order, and an
// instance that is slow (a long pause, a slow network) publishes what was news long ago.
//
// Each message carries a rank, the caller's order of the messages of one subject. A message is stored
// only with `Nats-Expected-Last-Subject-Sequence` set to the sequence of the subject's last message whose
// rank it was compared with: when another instance stored a message meanwhile, JetStream refuses
// (wrong last sequence, 10071) and the comparison is made again on what the stream holds now. So the
// ranks a subject holds over time never go down, whatever the arrival order.
//
// The comparison starts from a guess: the last message this process stored or read on the subject (an
// empty subject when it knows none). With one instance the guess is always right and a publish costs one
// round trip, as before; a wrong guess costs a refused publish and a read.
import { ErrorCodes, isOffsetSyncError, OffsetSyncError } from '@offsetsync/contracts';
import {
  JetStreamApiError,
  WRONG_LAST_SEQUENCE,
  type JetStreamPublisher,
  type PublishAck,
  type StoredMessage,
} from './jetstream-publisher.js';
import type { StreamMessage } from './publish-all.js';

/** A message and its rank among the messages of its subject. */
export interface RankedMessage<R> extends StreamMessage {
  rank: R;
}

/** The caller's order of the messages of one subject. */
export interface SubjectOrder<R> {
  /** The rank of a message read back from the stream. Must not throw: an unreadable one ranks lowest. */
  rankOf(stored: StoredMessage): R;
  /**
   * Whether a message of rank `candidate` may replace the stored one of rank `stored`. Should be true
   * for equal ranks: a repeat of a stored message is then dropped by its message id.
   */
  replaces(candidate: R, stored: R): boolean;
}

/** What became of one message. */
export type NewestOutcome<R> =
  /** Stored, or dropped as a duplicate of a message the stream had seen (`ack.duplicate`). */
  | { kind: 'stored'; ack: PublishAck }
  /** Not published: the subject holds a message this one may not replace, at `seq`, of rank `stored`. */
  | { kind: 'superseded'; seq: number; stored: R };

/** The subject's last message as far as this process knows: its sequence and rank. */
interface LastKnown<R> {
  seq: number;
  rank: R;
}

/**
 * The last message this process stored or read on each subject, for the next publish's guess. Bounded:
 * the least recently used subjects are forgotten first (their next publish reads the stream).
 */
export class LastOnSubject<R> {
  private readonly entries = new Map<string, LastKnown<R>>();

  /** @param maxSubjects how many subjects are remembered at most */
  constructor(private readonly maxSubjects: number) {
    if (!(maxSubjects >= 1)) throw new RangeError(`maxSubjects must be at least 1, got ${maxSubjects}`);
  }

  get size(): number {
    return this.entries.size;
  }

  get(subject: string): LastKnown<R> | undefined {
    const entry = this.entries.get(subject);
    if (entry !== undefined) {
      // Map order is insertion order: moving the entry to the end keeps the oldest first.
      this.entries.delete(subject);
      this.entries.set(subject, entry);
    }
    return entry;
  }

  set(subject: string, entry: LastKnown<R>): void {
    this.entries.delete(subject);
    this.entries.set(subject, entry);
    if (this.entries.size > this.maxSubjects) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
  }

  forget(subject: string): void {
    this.entries.delete(subject);
  }
}

/** The publisher calls used (a JetStreamPublisher has them). */
export type NewestPublisher = Pick<JetStreamPublisher, 'publish' | 'lastMessage'>;

export interface PublishNewestOptions<R> {
  /** The stream the subjects belong to (for reading their last message). */
  stream: string;
  order: SubjectOrder<R>;
  /** What this process knows of the subjects' last messages; updated by every publish. */
  known: LastOnSubject<R>;
  /** Messages in flight at once. */
  concurrency: number;
  /** Publishes of one message refused because another writer came first, before giving up. Default: 10. */
  maxAttempts?: number;
}

const DEFAULT_MAX_ATTEMPTS = 10;

/**
 * Publishes each message unless its subject holds a message it may not replace (see the file comment),
 * at most `concurrency` in flight, and resolves with the outcome of each, in the order given. Any failure
 * rejects with a retryable error after the in-flight publishes settle (the cause's code when it has one;
 * NATS_REJECTED when other writers kept coming first): the caller retries the whole batch, and the
 * message ids make the retry harmless.
 */
export async function publishNewest<R>(
  publisher: NewestPublisher,
  messages: readonly RankedMessage<R>[],
  options: PublishNewestOptions<R>,
): Promise<NewestOutcome<R>[]> {
  const outcomes = new Array<NewestOutcome<R>>(messages.length);
  let next = 0;
  let failure: unknown;
  const lane = async (): Promise<void> => {
    while (failure === undefined && next < messages.length) {
      const index = next++;
      try {
        outcomes[index] = await publishOne(publisher, messages[index]!, options);
      } catch (error: unknown) {
        failure ??= error;
      }
    }
  };
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(options.concurrency, messages.length)) }, lane),
  );
  if (failure !== undefined) {
    throw new OffsetSyncError(`JetStream did not take ${messages.length} message(s) in order`, {
      code: isOffsetSyncError(failure) ? failure.code : ErrorCodes.NATS_UNREACHABLE,
      retryable: true,
      cause: failure,
      details: { stream: options.stream },
    });
  }
  return outcomes;
}

async function publishOne<R>(
  publisher: NewestPublisher,
  message: RankedMessage<R>,
  options: PublishNewestOptions<R>,
): Promise<NewestOutcome<R>> {
  const { subject } = message;
  const { known, order } = options;
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  // Undefined: the subject holds nothing (expected last subject sequence 0).
  let last: LastKnown<R> | undefined = known.get(subject);
  for (let attempt = 1; ; attempt++) {
    if (last !== undefined && !order.replaces(message.rank, last.rank)) {
      known.set(subject, last);
      return { kind: 'superseded', seq: last.seq, stored: last.rank };
    }
    try {
      const ack = await publisher.publish(subject, message.payload, {
        msgId: message.msgId,
        expectedLastSubjectSequence: last?.seq ?? 0,
        ...(message.headers === undefined ? {} : { headers: message.headers }),
      });
      // JetStream checks the message id before the expected sequence: a duplicate's sequence is that of
      // the message first stored with the id, which need not be the subject's last one any more.
      if (ack.duplicate) known.forget(subject);
      else known.set(subject, { seq: ack.seq, rank: message.rank });
      return { kind: 'stored', ack };
    } catch (error: unknown) {
      if (!(error instanceof JetStreamApiError && error.errCode === WRONG_LAST_SEQUENCE)) throw error;
      known.forget(subject);
    }
    if (attempt >= maxAttempts) {
      throw new OffsetSyncError(`${subject} kept changing (${maxAttempts} attempts)`, {
        code: ErrorCodes.NATS_REJECTED,
        retryable: true,
        details: { subject },
      });
    }
    const stored = await publisher.lastMessage(options.stream, subject);
    last = stored === undefined ? undefined : { seq: stored.seq, rank: order.rankOf(stored) };
  }
}
