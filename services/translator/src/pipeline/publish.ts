// The publish step of the translation pipeline: the OffsetTranslated event of each translation, built
// purely from the source commit and its translation and sent through the event envelope.
import type { Context } from '@opentelemetry/api';
import {
  encodeEvent,
  OffsetTranslated,
  translatedMessageId,
  TranslationOutcome,
  type Names,
  type OffsetCommitted,
} from '@offsetsync/contracts';
import type { StreamMessage } from '@offsetsync/jetstream';
import type { Translation } from '../translation-plan.js';

const OUTCOME_NAMES: Record<number, string> = {
  [TranslationOutcome.TRANSLATION_OUTCOME_EXACT]: 'exact',
  [TranslationOutcome.TRANSLATION_OUTCOME_INEXACT]: 'inexact',
  [TranslationOutcome.TRANSLATION_OUTCOME_PENDING]: 'pending',
  [TranslationOutcome.TRANSLATION_OUTCOME_REFUSED]: 'refused',
};

/** The outcome's name in metrics, spans and logs (`exact`, `inexact`, `pending`, `refused`). Pure. */
export function outcomeName(outcome: TranslationOutcome): string {
  return OUTCOME_NAMES[outcome] ?? 'unknown';
}

/** The link of a translation: aliases of its source and target clusters. */
export interface Link {
  source: string;
  target: string;
}

/** One translation as it is published. */
export interface PublishedTranslation {
  link: Link;
  event: OffsetCommitted;
  translation: Translation;
  /** JetStream's count of deliveries of the source commit. */
  attempts: number;
  /** When the translation was made (epoch ms). */
  translatedAtMs: number;
}

/** The OffsetTranslated event of one translation. Pure. */
function translatedEvent(p: PublishedTranslation): OffsetTranslated {
  const { event, translation: t } = p;
  return OffsetTranslated.fromPartial({
    sourceCluster: p.link.source,
    targetCluster: p.link.target,
    group: event.group,
    topic: event.topic,
    partition: event.partition,
    sourceOffset: event.committedOffset,
    targetOffset: t.targetOffset,
    outcome: t.outcome,
    method: t.method,
    refusalReason: t.refusalReason,
    detail: t.detail,
    version: event.version,
    sourceCommitTimestampMs: event.commitTimestampMs,
    observedAtMs: event.observedAtMs,
    translatedAtMs: p.translatedAtMs,
    attempts: p.attempts,
  });
}

/**
 * The stream message of one translation, continuing the trace of `traceContext`. Each attempt of a
 * pending translation is news for health and has a message id of its own; a final one is published
 * once. Pure.
 */
export function translatedMessage(
  names: Names,
  p: PublishedTranslation,
  traceContext: Context,
): StreamMessage {
  const pending = p.translation.outcome === TranslationOutcome.TRANSLATION_OUTCOME_PENDING;
  const msgId = translatedMessageId(
    p.link.source,
    p.link.target,
    p.event.version,
    pending ? { final: false, attempts: p.attempts } : { final: true },
  );
  const encoded = encodeEvent(
    { type: 'OffsetTranslated', event: translatedEvent(p) },
    { subject: names.translated(p.link.source, p.link.target, p.event), msgId, trace: traceContext },
  );
  return { subject: encoded.subject, payload: encoded.payload, headers: encoded.headers, msgId };
}
