// The `Nats-Msg-Id` of every event: JetStream drops a message whose id it saw within the stream's duplicate
// window, so an event published again (a retried batch, a restarted instance, a second instance deciding the
// same thing) is stored once. The formats are part of the wire: instances of two releases running side by
// side during a rolling upgrade must produce the same ids for the same event.
import type { Version } from './gen/offsetsync/v1/events.js';

/** OffsetCommitted and OffsetDeleted: source cluster + offsets-topic partition + offset of the record. */
export function committedMessageId(source: string, version: Version): string {
  return `${source}:${version.offsetsPartition}:${version.offsetsOffset}`;
}

/**
 * How far a translation got: final (published once per revision: 0 the first, then each forward
 * revision), or pending after this many attempts (each is news).
 */
export type TranslationAttempt = { final: true; revision: number } | { final: false; attempts: number };

/** OffsetTranslated: link, version, and `final`, `revised-<revision>` or `pending-<attempts>`. */
export function translatedMessageId(
  source: string,
  target: string,
  version: Version | undefined,
  attempt: TranslationAttempt,
): string {
  const stage = !attempt.final
    ? `pending-${attempt.attempts}`
    : attempt.revision === 0
      ? 'final'
      : `revised-${attempt.revision}`;
  return `${source}:${target}:${version?.offsetsPartition ?? -1}:${version?.offsetsOffset ?? -1}:${stage}`;
}

/**
 * OffsetApplied: link, version, outcome (`APPLIED`, or the skip reason) and, for a revised translation,
 * `-r<revision>`. The same outcome for the same translation, decided again after a redelivery or by
 * another instance, is stored once.
 */
export function appliedMessageId(
  source: string,
  target: string,
  version: Version,
  outcome: string,
  revision = 0,
): string {
  const decided = revision === 0 ? outcome : `${outcome}-r${revision}`;
  return `${source}:${target}:${version.offsetsPartition}:${version.offsetsOffset}:${decided}`;
}
