// What a committed offset becomes on a target, decided from where the locator found it resumes. Pure.
//
// A committed offset c says "records before c are done". Its next-record anchor N is the record at c
// (or the first data record after it); its last-consumed anchor L is the last data record before c.
// The locator reads the target around their copies and resumePoint() decides where the group resumes,
// exact or not (duplicated runs, identical records). When no copy is found but the search had to give
// up, the floor it searched from is safe (never past a copy) but inexact. Every offset lies within the
// target's log start and end.
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
import type { TargetTopic } from '@offsetsync/runtime';

/** Where a source commit resumes on the target, as far as the locator could tell. */
export type Location =
  | {
      kind: 'found';
      /** The offset to commit. */
      offset: number;
      /** The target offset of the first copy of the anchor the offset was derived from. */
      firstCopy: number;
      role: 'next' | 'last';
      /** Whether the group reads no copy of a consumed record from there (see resume-point.ts). */
      exact: boolean;
      /** Why the answer is inexact, or how a duplicated run was recognised. */
      detail: string;
      method: 'delta-probe' | 'timestamp-scan';
      /** The target topic's id when the copy was found (unknown when Metadata could not tell it). */
      topicId?: string | undefined;
      /**
       * The window reached the target's log end before it held the duplicate window after the first copy:
       * copies of consumed records the replicator writes later can still move the answer forward.
       */
      openEnded?: boolean;
    }
  /**
   * No copy on the target, and the target's log start lies past where they were: records at the log
   * start are stamped later than the anchors (retention or DeleteRecords removed them).
   */
  | { kind: 'removed'; detail: string }
  /** No record with a timestamp >= T yet, or the scan reached the log end without a match. */
  | { kind: 'not-arrived'; detail: string; fallbackOffset?: number }
  /** The scan window ran out before the log end; `fallbackOffset` is the floor the scan started from. */
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
  /** The anchor that decided an exact result and the offset of its first copy, for the position memory. */
  learned?: { anchor: Anchor; targetOffset: number; topicId: string };
  /**
   * Made from a window that reached the target's log end early (Location.openEnded): the translator
   * watches it and revises it forward when more copies of consumed records follow.
   */
  revisable?: true;
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

/**
 * Decisions that need no look at the target, given where the topic is on it (`target`; default: the same
 * name). Undefined when the anchors must be located.
 */
export function decideWithoutTarget(
  event: OffsetCommitted,
  target: TargetTopic = { kind: 'replicated', topic: event.topic },
): Translation | undefined {
  if (target.kind === 'not-replicated')
    return refused(
      RefusalReason.REFUSAL_REASON_TOPIC_NOT_REPLICATED,
      `not replicated by this link: ${target.detail}`,
    );
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
 * Decides the translation once the commit was located. `location` is undefined when it was not needed (an
 * empty source partition). `bounds` are the target partition's bounds (for the log-start clamp, the
 * log-end check and empty sources).
 */
export function decide(
  event: OffsetCommitted,
  location: Location | undefined,
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
  if (location?.kind === 'log-append-time')
    return refused(RefusalReason.REFUSAL_REASON_LOG_APPEND_TIME_TARGET, location.detail);
  if (location?.kind === 'partition-missing')
    return refused(RefusalReason.REFUSAL_REASON_PARTITION_MISSING, location.detail);
  if (location?.kind === 'topic-missing') return pending(location.detail);

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
  if (location === undefined) return pending('anchors not located yet');

  switch (location.kind) {
    case 'found':
      return found(event, location, bounds);
    case 'removed':
      if (bounds === undefined) return pending(location.detail);
      return clamp(bounds, location.detail);
    case 'failed':
      return pending(`target read failed: ${location.detail}`);
    case 'not-arrived':
      // Past the configured patience, the floor is still safe: the counterpart, when it arrives, lands
      // after everything there now. Never the log end for a record with no such offset.
      if (options.fallBack && location.fallbackOffset !== undefined) {
        return fallback(location.fallbackOffset, bounds, `gave up waiting: ${location.detail}`);
      }
      return pending(location.detail);
    case 'window-exhausted':
      if (options.exhaustedFallsBack === false)
        return pending(`${location.detail}; searching again before falling back`);
      return fallback(location.fallbackOffset, bounds, location.detail);
  }
}

/** The translation of a located commit: within the target's bounds, or clamped to its log start. */
function found(
  event: OffsetCommitted,
  location: Extract<Location, { kind: 'found' }>,
  bounds: TargetBounds | undefined,
): Translation {
  if (bounds !== undefined && location.offset > bounds.highWatermark) {
    // The partition shrank since the records were read (deleted and recreated): never past its end.
    return pending(
      `offset ${location.offset} is past the target log end ${bounds.highWatermark}; searching again`,
    );
  }
  if (bounds !== undefined && location.offset < bounds.logStartOffset) {
    return clamp(bounds, `the counterpart at ${location.offset} is below the target log start`);
  }
  const anchor = location.role === 'next' ? event.nextRecord : event.lastConsumed;
  return {
    outcome: location.exact
      ? TranslationOutcome.TRANSLATION_OUTCOME_EXACT
      : TranslationOutcome.TRANSLATION_OUTCOME_INEXACT,
    method: methodOf(location),
    refusalReason: RefusalReason.REFUSAL_REASON_UNSPECIFIED,
    targetOffset: location.offset,
    detail: location.detail,
    ...(location.exact && anchor !== undefined && location.topicId !== undefined
      ? { learned: { anchor, targetOffset: location.firstCopy, topicId: location.topicId } }
      : {}),
    ...(location.openEnded === true ? { revisable: true as const } : {}),
  };
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
