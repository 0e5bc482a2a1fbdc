// The publish step of the translation pipeline: the OffsetTranslated event of each translation, built
// purely from the source commit and its translation and sent through the event envelope, and the order
// of the translations of one key, by which a translation replaces the key's last one in the translated
// stream or is left out (see publishNewest in @offsetsync/jetstream).
import type { Context } from '@opentelemetry/api';
import {
  compareVersions,
  encodeEvent,
  EVENT_TYPE_HEADER,
  OffsetTranslated,
  translatedMessageId,
  TranslationOutcome,
  type Names,
  type OffsetCommitted,
  type Version,
} from '@offsetsync/contracts';
import type { RankedMessage, StoredMessage, SubjectOrder } from '@offsetsync/jetstream';
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
  /** 0 for a version's first final translation; n for its n-th forward revision. Default 0. */
  revision?: number;
  /** The topic's name on the target; undefined when the link does not replicate it. Default: the same name. */
  targetTopic?: string | undefined;
}

/**
 * Where a translation stands among the translations of its key: first its version (the source commit's
 * position in `__consumer_offsets`: a rewind on the source is a newer version), then how far it got, a
 * final translation (exact, inexact, refused) after every pending attempt of the same version, then its
 * revision (a final translation revised forward after more copies of consumed records arrived).
 */
export interface TranslationRank {
  version: Version | undefined;
  /** The attempts of a pending translation; {@link FINAL_STAGE} for a final one. */
  stage: number;
  /** 0 unless the final translation was revised. */
  revision: number;
}

/** The stage of a final translation: after every pending attempt. */
export const FINAL_STAGE = Number.POSITIVE_INFINITY;

/** The rank of a translation of `version` with this outcome after `attempts` deliveries. Pure. */
export function translationRank(
  version: Version | undefined,
  outcome: TranslationOutcome,
  attempts: number,
  revision = 0,
): TranslationRank {
  const pending = outcome === TranslationOutcome.TRANSLATION_OUTCOME_PENDING;
  return { version, stage: pending ? attempts : FINAL_STAGE, revision: pending ? 0 : revision };
}

/** Negative when `a` is older than `b`, zero when they rank the same, positive when newer. Pure. */
export function compareTranslationRanks(a: TranslationRank, b: TranslationRank): number {
  const byVersion = compareVersions(a.version, b.version);
  if (byVersion !== 0) return byVersion;
  if (a.stage !== b.stage) return a.stage < b.stage ? -1 : 1;
  return a.revision - b.revision;
}

/**
 * Whether a translation of rank `candidate` replaces the key's stored one: unless the stored one is
 * newer. The same rank replaces: it is a repeat of the same event (a redelivery, a retried batch), which
 * JetStream drops by its message id. Offsets play no part: a rewind is a newer version. Pure.
 */
export function replacesStored(candidate: TranslationRank, stored: TranslationRank): boolean {
  return compareTranslationRanks(candidate, stored) >= 0;
}

/** Lower than every translation: what a stored message that is not a readable OffsetTranslated ranks. */
const UNREADABLE: TranslationRank = { version: undefined, stage: Number.NEGATIVE_INFINITY, revision: 0 };

/**
 * The rank of a message read back from the translated stream. One that is not a readable
 * OffsetTranslated ranks below every translation, so the next translation of the key replaces it. Pure.
 */
export function storedTranslationRank(stored: Pick<StoredMessage, 'data' | 'headers'>): TranslationRank {
  // Messages without the type header are OffsetTranslated events of releases before it.
  const type = stored.headers.get(EVENT_TYPE_HEADER.toLowerCase()) ?? 'OffsetTranslated';
  if (type !== 'OffsetTranslated') return UNREADABLE;
  let event: OffsetTranslated;
  try {
    event = OffsetTranslated.decode(stored.data);
  } catch {
    return UNREADABLE;
  }
  if (event.version === undefined) return UNREADABLE;
  return translationRank(event.version, event.outcome, event.attempts, event.revision);
}

/** The order of the translations of one key in the translated stream. */
export const translationOrder: SubjectOrder<TranslationRank> = {
  rankOf: storedTranslationRank,
  replaces: replacesStored,
};

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
    revision: p.revision ?? 0,
    // Empty when the name is the same (or unknown: not replicated), as in events before topic names.
    targetTopic: p.targetTopic === undefined || p.targetTopic === event.topic ? '' : p.targetTopic,
  });
}

/**
 * Where one translation is published: its subject, and its message id. Each attempt of a pending
 * translation is news for health and has a message id of its own; a final one is published once. Pure.
 */
export function translationAddress(
  names: Names,
  p: PublishedTranslation,
): { subject: string; msgId: string } {
  const pending = p.translation.outcome === TranslationOutcome.TRANSLATION_OUTCOME_PENDING;
  return {
    subject: names.translated(p.link.source, p.link.target, p.event),
    msgId: translatedMessageId(
      p.link.source,
      p.link.target,
      p.event.version,
      pending ? { final: false, attempts: p.attempts } : { final: true, revision: p.revision ?? 0 },
    ),
  };
}

/**
 * The stream message of one translation at `address` (default: its {@link translationAddress}), continuing
 * the trace of `traceContext`, with its rank. Pure.
 */
export function translatedMessage(
  names: Names,
  p: PublishedTranslation,
  traceContext: Context,
  address: { subject: string; msgId: string } = translationAddress(names, p),
): RankedMessage<TranslationRank> {
  const { subject, msgId } = address;
  const encoded = encodeEvent(
    { type: 'OffsetTranslated', event: translatedEvent(p) },
    { subject, msgId, trace: traceContext },
  );
  return {
    subject: encoded.subject,
    payload: encoded.payload,
    headers: encoded.headers,
    msgId,
    rank: translationRank(p.event.version, p.translation.outcome, p.attempts, p.revision),
  };
}
