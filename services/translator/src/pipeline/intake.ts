// The first step of the translation pipeline: of a batch only the newest message of each key (subject)
// matters, the older ones are done; each newest message is read through the event envelope. Pure.
import type { Context } from '@opentelemetry/api';
import {
  decodeEvent,
  ErrorCodes,
  OffsetSyncError,
  type OffsetCommitted,
  type ReceivedMessage,
} from '@offsetsync/contracts';

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

/** What one message of the committed stream is to the translator. */
export type CommitRead =
  /** A source commit to translate, with the trace it continues. */
  | { kind: 'commit'; event: OffsetCommitted; trace: Context }
  /**
   * Anything else needs no translation: deletions (the committer does not delete offsets on targets),
   * and types this build does not take.
   */
  | { kind: 'no-translation' }
  /** An OffsetCommitted whose payload cannot be decoded (DECODE_ERROR). */
  | { kind: 'undecodable'; error: OffsetSyncError };

/** Reads one message of the committed stream. Pure. */
export function readCommit(message: ReceivedMessage): CommitRead {
  const decoded = decodeEvent(message, { accept: ['OffsetCommitted'] });
  if (decoded.ok) return { kind: 'commit', event: decoded.event, trace: decoded.trace };
  if (decoded.reason !== 'UNDECODABLE') return { kind: 'no-translation' };
  return {
    kind: 'undecodable',
    error: new OffsetSyncError(decoded.detail, {
      code: ErrorCodes.DECODE_ERROR,
      details: { eventType: decoded.type },
    }),
  };
}
