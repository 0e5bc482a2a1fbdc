// What a committed offset becomes on a target, decided from where its anchors were found there. Pure.
//
// A committed offset c says "records before c are done". Its next-record anchor N is the record at c
// (or the first data record after it); its last-consumed anchor L is the last data record before c.
// On the target, N's counterpart at x means commit x; L's counterpart at y means commit y + 1. Either is
// exact. When neither is found but a timestamp lookup had to give up, the first target offset with a
// timestamp >= the anchor's is safe (never past the counterpart) but inexact.
import {
  AnchorStatus,
  RefusalReason,
  TranslationMethod,
  TranslationOutcome,
  type Anchor,
  type OffsetCommitted,
  type OffsetSyncError,
} from '@offsetsync/contracts';
import { type PartitionBounds } from '@offsetsync/kafka';

/** Where one anchor's counterpart is on the target, as far as the locator could tell. */
export type Location =
  | { kind: 'found'; offset: number; method: 'delta-probe' | 'timestamp-scan' }
  /** No record with a timestamp >= T yet, or the scan reached the log end without a match. */
  | { kind: 'not-arrived'; detail: string; fallbackOffset?: number }
  /** The scan window ran out before the log end; `fallbackOffset` is the first offset with ts >= T. */
  | { kind: 'window-exhausted'; fallbackOffset: number; detail: string }
  | { kind: 'topic-missing'; detail: string }
  | { kind: 'partition-missing'; detail: string }
  | { kind: 'log-append-time'; detail: string }
  /** The target could not be read; `error` is what went wrong, for the heartbeat problems. */
  | { kind: 'failed'; detail: string; error?: OffsetSyncError };

/** The target partition's log start and end. */
export type TargetBounds = PartitionBounds;

export interface Translation {
  outcome: TranslationOutcome;
  method: TranslationMethod;
  refusalReason: RefusalReason;
  /** -1 unless the outcome is EXACT or INEXACT. */
  targetOffset: number;
  detail: string;
  /** The anchor that decided an exact result and the offset of its counterpart, for learning the delta. */
  learned?: { anchor: Anchor; targetOffset: number };
}

function refused(reason: RefusalReason, detail: string): Translation {
  return {
    outcome: TranslationOutcome.TRANSLATION_OUTCOME_REFUSED,
    method: TranslationMethod.TRANSLATION_METHOD_NONE,
    refusalReason: reason,
    targetOffset: -1,
    detail,
  };
}

function pending(detail: string): Translation {
  return {
    outcome: TranslationOutcome.TRANSLATION_OUTCOME_PENDING,
    method: TranslationMethod.TRANSLATION_METHOD_NONE,
    refusalReason: RefusalReason.REFUSAL_REASON_UNSPECIFIED,
    targetOffset: -1,
    detail,
  };
}

/** The anchors to look for, in the order they are tried: the next record first. */
function anchorsToLocate(event: OffsetCommitted): Anchor[] {
  return [event.nextRecord, event.lastConsumed].filter((a): a is Anchor => a !== undefined);
}

/** Decisions that need no look at the target. Undefined when the anchors must be located. */
export function decideWithoutTarget(event: OffsetCommitted): Translation | undefined {
  switch (event.anchorStatus) {
    case AnchorStatus.ANCHOR_STATUS_BEYOND_LOG_END:
      return refused(
        RefusalReason.REFUSAL_REASON_INVALID_SOURCE_OFFSET,
        `invalid source commit: ${event.anchorDetail}`,
      );
    case AnchorStatus.ANCHOR_STATUS_UNRESOLVABLE:
      return refused(
        RefusalReason.REFUSAL_REASON_ANCHOR_UNRESOLVED,
        `the collector found no anchor: ${event.anchorDetail}`,
      );
    default:
      break;
  }
  if (
    event.anchorStatus !== AnchorStatus.ANCHOR_STATUS_EMPTY_PARTITION &&
    anchorsToLocate(event).length === 0
  ) {
    return refused(RefusalReason.REFUSAL_REASON_ANCHOR_UNRESOLVED, 'the event carries no anchor');
  }
  return undefined;
}

/**
 * Decides the translation once the anchors were looked for. `next` and `last` are the locations of the
 * next-record and last-consumed anchors (undefined when the event has no such anchor or it was not
 * needed). `bounds` are the target partition's bounds (for the log-start clamp and empty sources).
 */
export function decide(
  event: OffsetCommitted,
  next: Location | undefined,
  last: Location | undefined,
  bounds: TargetBounds | undefined,
  options: {
    /** A record that has not arrived may be given up on (pendingFallbackAfterMs passed). */
    fallBack: boolean;
    /**
     * Whether an exhausted search window may fall back now. The translator first retries a few times: a
     * replicator still catching up makes a search miss records that a moment later are there to be found.
     */
    exhaustedFallsBack?: boolean;
  } = { fallBack: false },
): Translation {
  const early = decideWithoutTarget(event);
  if (early !== undefined) return early;
  const locations = [next, last].filter((l): l is Location => l !== undefined);
  for (const location of locations) {
    if (location.kind === 'log-append-time')
      return refused(RefusalReason.REFUSAL_REASON_LOG_APPEND_TIME_TARGET, location.detail);
    if (location.kind === 'partition-missing')
      return refused(RefusalReason.REFUSAL_REASON_PARTITION_MISSING, location.detail);
  }
  const missingTopic = locations.find((l) => l.kind === 'topic-missing');
  if (missingTopic !== undefined) return pending(missingTopic.detail);

  if (event.anchorStatus === AnchorStatus.ANCHOR_STATUS_EMPTY_PARTITION) {
    // Nothing is left on the source to anchor on. The target's log start never skips a record.
    if (bounds === undefined) return pending('target partition bounds not read yet');
    return {
      outcome: TranslationOutcome.TRANSLATION_OUTCOME_INEXACT,
      method: TranslationMethod.TRANSLATION_METHOD_EMPTY_SOURCE,
      refusalReason: RefusalReason.REFUSAL_REASON_UNSPECIFIED,
      targetOffset: bounds.logStartOffset,
      detail: 'the source partition is empty; starting at the target log start',
    };
  }

  let exact: { offset: number; anchor: Anchor; counterpart: number; method: TranslationMethod } | undefined;
  if (next?.kind === 'found' && event.nextRecord !== undefined) {
    exact = {
      offset: next.offset,
      anchor: event.nextRecord,
      counterpart: next.offset,
      method: methodOf(next),
    };
  } else if (last?.kind === 'found' && event.lastConsumed !== undefined) {
    exact = {
      offset: last.offset + 1,
      anchor: event.lastConsumed,
      counterpart: last.offset,
      method: methodOf(last),
    };
  }
  if (exact !== undefined) {
    if (bounds !== undefined && exact.offset < bounds.logStartOffset) {
      return clamp(bounds, `the counterpart at ${exact.offset} is below the target log start`);
    }
    return {
      outcome: TranslationOutcome.TRANSLATION_OUTCOME_EXACT,
      method: exact.method,
      refusalReason: RefusalReason.REFUSAL_REASON_UNSPECIFIED,
      targetOffset: exact.offset,
      detail: '',
      learned: { anchor: exact.anchor, targetOffset: exact.counterpart },
    };
  }

  const failed = locations.find((l) => l.kind === 'failed');
  if (failed !== undefined) return pending(`target read failed: ${failed.detail}`);
  const notArrived = locations.find((l) => l.kind === 'not-arrived');
  if (notArrived !== undefined) {
    // Past the configured patience, the first offset with ts >= T is still safe: the counterpart, when it
    // arrives, lands after everything there now. Never the log end for a record with no such offset.
    if (options.fallBack && notArrived.fallbackOffset !== undefined) {
      return fallback(notArrived.fallbackOffset, bounds, `gave up waiting: ${notArrived.detail}`);
    }
    return pending(notArrived.detail);
  }

  // Only exhausted windows are left: the timestamp offset of the first anchor tried is safe.
  const exhausted = locations.find(
    (l): l is Extract<Location, { kind: 'window-exhausted' }> => l.kind === 'window-exhausted',
  );
  if (exhausted === undefined) return pending('anchors not located yet');
  if (options.exhaustedFallsBack === false)
    return pending(`${exhausted.detail}; searching again before falling back`);
  return fallback(exhausted.fallbackOffset, bounds, exhausted.detail);
}

/** The inexact, safe answer: the first target offset with a timestamp >= the anchor's. */
function fallback(offset: number, bounds: TargetBounds | undefined, detail: string): Translation {
  if (bounds !== undefined && offset < bounds.logStartOffset) return clamp(bounds, detail);
  return {
    outcome: TranslationOutcome.TRANSLATION_OUTCOME_INEXACT,
    method: TranslationMethod.TRANSLATION_METHOD_TIMESTAMP_FALLBACK,
    refusalReason: RefusalReason.REFUSAL_REASON_UNSPECIFIED,
    targetOffset: offset,
    detail,
  };
}

function clamp(bounds: TargetBounds, detail: string): Translation {
  return {
    outcome: TranslationOutcome.TRANSLATION_OUTCOME_INEXACT,
    method: TranslationMethod.TRANSLATION_METHOD_LOG_START_CLAMP,
    refusalReason: RefusalReason.REFUSAL_REASON_UNSPECIFIED,
    targetOffset: bounds.logStartOffset,
    detail: `${detail}; clamped to the target log start ${bounds.logStartOffset} (retention on the target is shorter)`,
  };
}

function methodOf(location: Extract<Location, { kind: 'found' }>): TranslationMethod {
  return location.method === 'delta-probe'
    ? TranslationMethod.TRANSLATION_METHOD_DELTA_PROBE
    : TranslationMethod.TRANSLATION_METHOD_TIMESTAMP_SCAN;
}
