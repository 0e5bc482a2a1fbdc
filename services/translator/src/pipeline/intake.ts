// The first step of the translation pipeline: of a batch only the newest message of each key (subject)
// matters, the older ones are done; each newest message is read through the event envelope. Pure.
import type { Context } from '@opentelemetry/api';
import {
  decodeEvent,
  ErrorCodes,
  OffsetSyncError,
  type Names,
  type OffsetCommitted,
  type ReceivedMessage,
} from '@offsetsync/contracts';
import { TOPIC_NAME_PATTERN } from '@offsetsync/runtime';

/** The newest message of each subject, and the older ones the batch holds. */
export interface NewestPerSubject<T> {
  /** The newest message (highest stream sequence) of each subject, in order of its subject's first message. */
  newest: T[];
  /** Every other message: superseded by a newer one of its subject in the same batch. */
  superseded: T[];
}

/** Splits a batch into the newest message of each subject and the superseded rest. Pure. */
export function newestPerSubject<T extends { subject: string; seq: number }>(
  messages: readonly T[],
): NewestPerSubject<T> {
  const newest = new Map<string, T>();
  const superseded: T[] = [];
  for (const message of messages) {
    const previous = newest.get(message.subject);
    if (previous === undefined || previous.seq < message.seq) {
      if (previous !== undefined) superseded.push(previous);
      newest.set(message.subject, message);
    } else {
      superseded.push(message);
    }
  }
  return { newest: [...newest.values()], superseded };
}

/** Why a message of the committed stream is poison, as the translator counts it. */
export type UnusableOutcome =
  /** No type header, or a payload that is no OffsetCommitted (DECODE_ERROR). */
  | 'undecodable'
  /** A decoded OffsetCommitted whose fields cannot be a commit, e.g. a negative partition (DECODE_ERROR). */
  | 'malformed'
  /** A commit whose body names another source or key than the subject it came on (EVENT_REFUSED). */
  | 'refused_subject_mismatch';

/** What one message of the committed stream is to the translator. */
export type CommitRead =
  /** A source commit to translate, with the trace it continues. */
  | { kind: 'commit'; event: OffsetCommitted; trace: Context }
  /**
   * A known event that needs no translation: deletions (the committer does not delete offsets on
   * targets), or a type of a newer build (`unknownType`), counted apart.
   */
  | { kind: 'no-translation'; unknownType?: string }
  /** Poison: it can never be translated, so it is terminated (never redelivered), counted and reported. */
  | { kind: 'unusable'; outcome: UnusableOutcome; error: OffsetSyncError };

/** What in a decoded commit cannot be: a message for the log, or undefined when it is usable. Pure. */
function commitFieldProblem(event: OffsetCommitted): string | undefined {
  if (!TOPIC_NAME_PATTERN.test(event.topic))
    return `topic ${JSON.stringify(event.topic.slice(0, 300))} is not a Kafka topic name`;
  if (!Number.isInteger(event.partition) || event.partition < 0) return `partition ${event.partition}`;
  if (!Number.isSafeInteger(event.committedOffset) || event.committedOffset < 0)
    return `committed offset ${event.committedOffset}`;
  if (event.version === undefined) return 'no version';
  return undefined;
}

/**
 * Reads one message of the committed stream of `source` (the link's source, whose subjects the
 * consumer's filter vouches for). Pure.
 */
export function readCommit(
  message: ReceivedMessage & { readonly subject: string },
  source: string,
  names: Names,
): CommitRead {
  const decoded = decodeEvent(message, { accept: ['OffsetCommitted'] });
  if (!decoded.ok) {
    if (decoded.reason === 'UNEXPECTED_TYPE') return { kind: 'no-translation' };
    if (decoded.reason === 'UNKNOWN_TYPE') return { kind: 'no-translation', unknownType: decoded.type };
    // Without a type header the payload could be any event of the stream: never guessed.
    return unusable('undecodable', ErrorCodes.DECODE_ERROR, decoded.detail, message.subject, decoded.type);
  }
  const event = decoded.event;
  const problem = commitFieldProblem(event);
  if (problem !== undefined)
    return unusable(
      'malformed',
      ErrorCodes.DECODE_ERROR,
      `unusable OffsetCommitted: ${problem}`,
      message.subject,
      'OffsetCommitted',
    );
  // The translation goes on the body's key: a body naming another key than its subject (or another
  // source) would let whoever may publish on one key's subject move another group.
  if (event.sourceCluster !== source || names.committed(source, event) !== message.subject)
    return unusable(
      'refused_subject_mismatch',
      ErrorCodes.EVENT_REFUSED,
      `OffsetCommitted names source ${JSON.stringify(event.sourceCluster)}, group, topic or partition other than its subject`,
      message.subject,
      'OffsetCommitted',
    );
  return { kind: 'commit', event, trace: decoded.trace };
}

function unusable(
  outcome: UnusableOutcome,
  code: typeof ErrorCodes.DECODE_ERROR | typeof ErrorCodes.EVENT_REFUSED,
  message: string,
  subject: string,
  eventType: string,
): CommitRead {
  // The subject names the poisoned key (as the committer's refusals do).
  const details = { resource: `SUBJECT:${subject}`, eventType };
  return { kind: 'unusable', outcome, error: new OffsetSyncError(message, { code, details }) };
}
