// Translations to revise forward. A translation made while the target's records after the group's resume
// point did not yet fill the duplicate window (Translation.revisable) can be overtaken: an at-least-once
// replicator may still write another copy of records the group consumed, and a group resuming where the
// translation says would read that copy again. Such a translation is watched while the group does not
// commit again: when its target partition grew, it is made again from the same source commit, and when
// that lands later it is published as the next revision of the same version (the committer applies a
// revision only forward). Each translation is made again at most every translator.revisionIntervalMs,
// doubling after each look up to 32 times that: a group that keeps committing replaces its translation
// long before, and a replicator's rewrite after a restart is seen within seconds. A translation leaves the watch when a newer translation of its key is made,
// when a window without the log end settles it, when translator.revisionWindowMs has passed since the
// source commit was first translated, or when the watch is full (the oldest goes). Pure bookkeeping: the
// pipeline does the reads and the publishing.
import type { OffsetCommitted } from '@offsetsync/contracts';

/** One watched translation. */
export interface WatchedTranslation {
  /** The key: the subject of the source commit. */
  subject: string;
  event: OffsetCommitted;
  /** The revision last published (0: the first final translation). */
  revision: number;
  /** The target offset last published. */
  targetOffset: number;
  /** The target partition's high watermark when it was last made; -1 when unknown. */
  highWatermark: number;
  /** When the source commit was first translated (epoch ms). */
  sinceMs: number;
  /** How often it was made again. */
  looks: number;
  /** Not made again before this (epoch ms). */
  nextLookMs: number;
}

/** translator.revisionWindowMs and revisionIntervalMs, and how many translations may be watched at once. */
export interface RevisionLimits {
  windowMs: number;
  intervalMs: number;
  maxWatched: number;
}

/** The longest wait between two looks, in intervals. */
const MAX_BACKOFF_INTERVALS = 32;

/** When a translation looked at `looks` times, the last time at `nowMs`, is looked at next. Pure. */
export function nextLookMs(nowMs: number, looks: number, intervalMs: number): number {
  return nowMs + intervalMs * Math.min(MAX_BACKOFF_INTERVALS, 2 ** Math.max(0, looks - 1));
}

export class RevisionWatch {
  /** By subject; Map order makes the first entry the oldest. */
  private readonly watched = new Map<string, WatchedTranslation>();

  constructor(private readonly limits: RevisionLimits) {}

  get size(): number {
    return this.watched.size;
  }

  /**
   * Notes the translation just published for `subject`: watched when it is revisable (replacing what was
   * watched for the key), forgotten otherwise. `sinceMs` of a revision is its first translation's.
   */
  note(entry: WatchedTranslation, revisable: boolean): void {
    this.watched.delete(entry.subject);
    if (!revisable || this.limits.windowMs === 0) return;
    this.watched.set(entry.subject, entry);
    if (this.watched.size > this.limits.maxWatched) {
      const oldest = this.watched.keys().next().value;
      if (oldest !== undefined) this.watched.delete(oldest);
    }
  }

  /** A newer translation of the key is in the stream (made here or by another instance). */
  forget(subject: string): void {
    this.watched.delete(subject);
  }

  /**
   * The watched translations due to be looked at by `nowMs` (within the window, their next look reached);
   * the ones past the window leave the watch.
   */
  due(nowMs: number): WatchedTranslation[] {
    const due: WatchedTranslation[] = [];
    for (const [subject, entry] of this.watched) {
      if (nowMs - entry.sinceMs > this.limits.windowMs) this.watched.delete(subject);
      else if (entry.nextLookMs <= nowMs) due.push(entry);
    }
    return due;
  }

  /** A new entry for a translation of `event` first made at `nowMs`. */
  first(
    subject: string,
    event: OffsetCommitted,
    made: { targetOffset: number; highWatermark: number },
    nowMs: number,
  ): WatchedTranslation {
    return {
      subject,
      event,
      revision: 0,
      ...made,
      sinceMs: nowMs,
      looks: 0,
      nextLookMs: nextLookMs(nowMs, 0, this.limits.intervalMs),
    };
  }

  /** The entry after one more look at `nowMs`, with what that look made. */
  looked(
    entry: WatchedTranslation,
    made: Partial<Pick<WatchedTranslation, 'revision' | 'targetOffset' | 'highWatermark'>>,
    nowMs: number,
  ): WatchedTranslation {
    const looks = entry.looks + 1;
    return { ...entry, ...made, looks, nextLookMs: nextLookMs(nowMs, looks, this.limits.intervalMs) };
  }

  /** The watched entry of `subject`, if it is still the one given (not replaced meanwhile). */
  isWatched(entry: WatchedTranslation): boolean {
    return this.watched.get(entry.subject) === entry;
  }
}

/** Whether a new translation of a watched source commit is a revision to publish: a later offset. Pure. */
export function isForwardRevision(watched: WatchedTranslation, targetOffset: number): boolean {
  return targetOffset > watched.targetOffset;
}
