// Whether one translated offset may be committed on the target: the version check (invariant 2) and the
// target-ownership rule (invariant 3). Pure: the caller reads the KV record and the target's committed
// offset, and writes back what the decision says with compare-and-set.
import { compareVersions, formatVersion, parseCommitMetadata, type Version } from '@offsetsync/contracts';
import type { AppliedRecord } from './applied-record.js';
import { EMPTY_RECORD } from './applied-record.js';

/** What the decision needs of an OffsetTranslated event (EXACT or INEXACT). */
export interface Translation {
  version: Version;
  /** The offset to commit on the target. */
  targetOffset: number;
  /** When the group committed on the source (epoch ms). */
  sourceCommitTimestampMs: number;
}

/** The group partition's committed offset on the target, as OffsetFetch reports it. */
export interface TargetCommit {
  offset: number;
  metadata: string | null;
  /**
   * When the application made this commit, if known: a collector reading the target cluster (a link
   * back from it) publishes the target's own commits with their broker timestamps.
   */
  commitTimestampMs?: number | undefined;
}

export type ApplyDecision =
  /**
   * Commit `record.targetOffset`. `reserve`: write `record` to KV (compare-and-set) before committing;
   * false when KV already holds exactly this record (the same version delivered again after a crash
   * between the reservation and the commit), so there is nothing to reserve and nothing to restore.
   */
  | { kind: 'apply'; record: AppliedRecord; reserve: boolean }
  /** The same version is already committed on the target with offsetsync's mark: report, commit nothing. */
  | { kind: 'already-applied'; record: AppliedRecord }
  /** Commit nothing. `record`, when present, must be written to KV (the ownership was first seen now). */
  | { kind: 'skip'; reason: 'STALE_VERSION' | 'TARGET_AHEAD'; detail: string; record?: AppliedRecord };

/**
 * Whether the target's committed offset is the application's own: it carries no offsetsync mark and it
 * is not the offset offsetsync last committed there. (The offset test keeps an application that merely
 * re-commits the position offsetsync gave it, without consuming, from taking the position over.)
 */
export function isApplicationCommit(
  commit: TargetCommit | undefined,
  stored: AppliedRecord | undefined,
): boolean {
  if (commit === undefined) return false;
  if (parseCommitMetadata(commit.metadata) !== undefined) return false;
  return commit.offset !== (stored?.targetOffset ?? -1);
}

/**
 * The source version and offset of the target's committed offset when it carries offsetsync's mark from
 * `origin`; undefined for an application's commit, no commit, or a mark of another origin (versions of
 * different source clusters do not compare).
 */
function markedVersion(
  commit: TargetCommit | undefined,
  origin: string,
): { version: Version; offset: number } | undefined {
  const mark = parseCommitMetadata(commit?.metadata)?.mark;
  if (commit === undefined || mark === undefined || mark.origin !== origin) return undefined;
  return {
    version: { offsetsPartition: mark.offsetsPartition, offsetsOffset: mark.offsetsOffset },
    offset: commit.offset,
  };
}

/**
 * The target as its own floor (invariant 7): offsetsync's mark on the target's commit names the source
 * version it applied, so a translation older than that version is stale, and so is the same version with
 * a lower target offset (a version's translation is only ever revised forward: the translator revises an
 * applied one when the replicator wrote more copies of consumed records after it), whatever KV remembers. This keeps a
 * target from stepping back when the applied-versions bucket was lost or reset and the streams replay.
 * Undefined when the mark does not forbid the translation. Pure.
 */
export function targetFloor(
  commit: TargetCommit | undefined,
  origin: string,
  translation: Pick<Translation, 'version' | 'targetOffset'>,
): { reason: 'STALE_VERSION'; detail: string } | undefined {
  const marked = markedVersion(commit, origin);
  if (marked === undefined) return undefined;
  const order = compareVersions(translation.version, marked.version);
  if (order < 0) {
    return {
      reason: 'STALE_VERSION',
      detail:
        `version ${formatVersion(translation.version)} is older than version ${formatVersion(marked.version)} ` +
        `that the target's commit mark holds (offset ${marked.offset}); the target's commit mark holds a newer version`,
    };
  }
  if (order === 0 && marked.offset > translation.targetOffset) {
    return {
      reason: 'STALE_VERSION',
      detail:
        `version ${formatVersion(translation.version)} is already committed on the target with target offset ` +
        `${marked.offset} (its commit mark); a version's translation is only ever revised forward`,
    };
  }
  return undefined;
}

/** Whether the target's committed offset is offsetsync's commit of exactly this source version. */
function isMarkedWith(commit: TargetCommit | undefined, origin: string, version: Version): boolean {
  const marked = markedVersion(commit, origin);
  return marked !== undefined && compareVersions(marked.version, version) === 0;
}

export interface ApplyInput {
  /** Alias of the source cluster the translation comes from (the origin in offsetsync's mark). */
  source: string;
  translation: Translation;
  /** The KV record of the key; undefined when there is none. */
  stored: AppliedRecord | undefined;
  /** The key's committed offset on the target; undefined when the group has none there. */
  targetCommit: TargetCommit | undefined;
  nowMs: number;
}

/**
 * Decides what to do with one translation:
 * 1. A version older than the stored one is stale, and so is one older than the version in offsetsync's
 *    mark on the target's commit (the target is its own floor: {@link targetFloor}), even when KV has no
 *    record. The same version again is stale too when its target offset is lower (a translation is only
 *    revised forward); with a higher one it is a revision, applied; with the same offset it is a redelivery: already applied when the target holds
 *    offsetsync's mark for it, otherwise committed again (a crash between the KV reservation and the
 *    Kafka commit leaves exactly that state).
 * 2. The target owns the position from the moment an application commit is first seen there
 *    (`targetOwnedSinceMs`) until a source commit made later than that: earlier source commits are
 *    skipped as TARGET_AHEAD.
 * 3. Anything else, including a newer version with a lower offset (a rewind on the source), is applied.
 */
export function decideApply(input: ApplyInput): ApplyDecision {
  const { translation, stored, targetCommit, nowMs } = input;
  const order = stored?.version ? compareVersions(translation.version, stored.version) : 1;
  if (order < 0) {
    return {
      kind: 'skip',
      reason: 'STALE_VERSION',
      detail: `version ${formatVersion(translation.version)} is older than the applied version ${formatVersion(stored?.version)}`,
    };
  }
  const floor = targetFloor(targetCommit, input.source, translation);
  if (floor !== undefined) return { kind: 'skip', ...floor };
  if (order === 0 && stored !== undefined) {
    if (translation.targetOffset < stored.targetOffset) {
      return {
        kind: 'skip',
        reason: 'STALE_VERSION',
        detail: `version ${formatVersion(translation.version)} was already applied with the later target offset ${stored.targetOffset}`,
      };
    }
    if (
      translation.targetOffset === stored.targetOffset &&
      isMarkedWith(targetCommit, input.source, translation.version) &&
      targetCommit?.offset === stored.targetOffset
    ) {
      return { kind: 'already-applied', record: stored };
    }
  }

  // When a collector reads the target cluster too, the application's commit comes with its real time, and
  // that decides. Otherwise OffsetFetch tells nothing about when the application committed, so the time
  // offsetsync first saw the commit stands in for it. That time is never earlier than the real commit, so
  // the bound errs towards keeping the application's position: a source commit made between the
  // application's commit and its detection is skipped too, never the other way round.
  const applicationCommit = isApplicationCommit(targetCommit, stored);
  const knownSinceMs = applicationCommit ? targetCommit?.commitTimestampMs : undefined;
  const detectedNow =
    knownSinceMs === undefined && stored?.targetOwnedSinceMs === undefined && applicationCommit;
  const ownedSinceMs = knownSinceMs ?? stored?.targetOwnedSinceMs ?? (detectedNow ? nowMs : undefined);
  if (ownedSinceMs !== undefined && translation.sourceCommitTimestampMs <= ownedSinceMs) {
    const detail =
      `the application committed offset ${targetCommit?.offset ?? 'unknown'} on the target itself ` +
      `(seen at ${new Date(ownedSinceMs).toISOString()}); this source commit is older ` +
      `(${new Date(translation.sourceCommitTimestampMs).toISOString()})`;
    return detectedNow
      ? {
          kind: 'skip',
          reason: 'TARGET_AHEAD',
          detail,
          record: { ...(stored ?? EMPTY_RECORD), targetOwnedSinceMs: ownedSinceMs },
        }
      : { kind: 'skip', reason: 'TARGET_AHEAD', detail };
  }

  if (order === 0 && stored !== undefined && translation.targetOffset === stored.targetOffset) {
    // The same version again: commit it again. Only a recorded ownership that this source commit
    // outdates needs a KV write.
    if (stored.targetOwnedSinceMs === undefined) return { kind: 'apply', record: stored, reserve: false };
    return { kind: 'apply', record: withoutOwnership(stored), reserve: true };
  }
  return {
    kind: 'apply',
    reserve: true,
    record: {
      version: {
        offsetsPartition: translation.version.offsetsPartition,
        offsetsOffset: translation.version.offsetsOffset,
      },
      targetOffset: translation.targetOffset,
      appliedAtMs: nowMs,
      sourceCommitTimestampMs: translation.sourceCommitTimestampMs,
    },
  };
}

/**
 * The record to put back when the commit of a reservation failed or was withdrawn: the record before the
 * reservation, keeping any ownership recorded meanwhile (the earlier detection time when both have one).
 * `ownedSinceMs`, when given, is an application commit seen on the target right before the commit (the
 * reason the commit was withdrawn): it is newer than any ownership recorded before, so it replaces it.
 * Undefined when there was no record and there is no ownership to keep: the key is then removed.
 */
export function restoredRecord(
  previous: AppliedRecord | undefined,
  current: AppliedRecord | undefined,
  ownedSinceMs?: number,
): AppliedRecord | undefined {
  const owned = [previous?.targetOwnedSinceMs, current?.targetOwnedSinceMs].filter((t) => t !== undefined);
  const ownedSince = ownedSinceMs ?? (owned.length === 0 ? undefined : Math.min(...owned));
  if (previous === undefined && ownedSince === undefined) return undefined;
  const base = withoutOwnership(previous ?? EMPTY_RECORD);
  return ownedSince === undefined ? base : { ...base, targetOwnedSinceMs: ownedSince };
}

/** Whether `record` still holds the reservation `reserved` (same version and offset). */
export function holdsReservation(record: AppliedRecord | undefined, reserved: AppliedRecord): boolean {
  if (record?.version == null || reserved.version === null) return false;
  return (
    compareVersions(record.version, reserved.version) === 0 && record.targetOffset === reserved.targetOffset
  );
}

/**
 * After offsetsync committed `committed` for a key, whether KV holds a newer version that must be
 * committed again (see the pipeline's post-commit check). Not when the target owns the position.
 */
export function newerReservation(
  record: AppliedRecord | undefined,
  committed: Version,
): AppliedRecord | undefined {
  if (record?.version == null || record.targetOwnedSinceMs !== undefined) return undefined;
  return compareVersions(record.version, committed) > 0 ? record : undefined;
}

function withoutOwnership(record: AppliedRecord): AppliedRecord {
  const { targetOwnedSinceMs: _dropped, ...rest } = record;
  return rest;
}
