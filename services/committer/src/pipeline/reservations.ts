// The applied-versions reservations of the commit pipeline: each key's decision is written to KV with
// compare-and-set before its Kafka commit, so any number of instances agree on the newest version per key,
// and put back when that commit failed. What this instance last read or wrote of a key is remembered
// (VersionCache), so a key it wrote last, or never saw, is reserved with one write and no read.
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import type { Logger } from '@offsetsync/runtime';
import type { AppliedRecord } from '../applied-record.js';
import type { AppliedVersionsStore, StoredEntry } from '../applied-versions-store.js';
import {
  decideApply,
  holdsReservation,
  restoredRecord,
  type ApplyDecision,
  type TargetCommit,
  type Translation,
} from '../apply-decision.js';
import { VersionCache } from '../version-cache.js';
import { PipelineAreas, type Link, type ProblemReporter, type WorkItem } from './work-item.js';

/** Compare-and-set attempts on one key before the event is retried later. */
const MAX_CAS_ATTEMPTS = 8;
/** The guess for a key this instance has not seen: never written. */
const NEW_KEY: StoredEntry = { record: undefined, revision: 0 };

/** One item's decision, and what its reservation wrote. */
export interface Reservation {
  item: WorkItem;
  decision: ApplyDecision;
  /** Set when the decision's record was written: the revision written and the record it replaced. */
  written?: { revision: number; previous: AppliedRecord | undefined };
}

/** A reservation whose decision is to commit. */
export type CommitReservation = Reservation & { decision: { kind: 'apply' } };

/**
 * The record a decision writes to KV before anything is committed, if any: an applied version when it
 * must be reserved, a first-seen ownership of a skip. Pure.
 */
export function recordToWrite(decision: ApplyDecision): AppliedRecord | undefined {
  switch (decision.kind) {
    case 'apply':
      return decision.reserve ? decision.record : undefined;
    case 'skip':
      return decision.record;
    case 'already-applied':
      return undefined;
  }
}

/** What the decision needs of a work item's translation. Pure. */
function translationOf(item: WorkItem): Translation {
  return {
    version: item.version,
    targetOffset: item.translation.targetOffset,
    sourceCommitTimestampMs: item.translation.sourceCommitTimestampMs,
  };
}

/** What the reservations need. */
export interface ReservationsOptions {
  link: Link;
  store: AppliedVersionsStore;
  logger: Logger;
  clock: () => number;
  /** Keys whose last known KV record and revision are kept in memory. */
  versionCacheSize: number;
  problems?: ProblemReporter | undefined;
}

/** The applied-versions KV as the pipeline uses it: reserve, restore, read. */
export class Reservations {
  private readonly versions: VersionCache;

  constructor(private readonly options: ReservationsOptions) {
    this.versions = new VersionCache(options.versionCacheSize);
  }

  /**
   * Reads the key's record, decides, and writes the decision's record with compare-and-set. A concurrent
   * writer (another committer instance) makes the write fail: read and decide again. Rejects with a
   * retryable NATS_REJECTED when the key kept changing, or with the store's error.
   */
  async reserve(item: WorkItem, targetCommit: TargetCommit | undefined): Promise<Reservation> {
    const translation = translationOf(item);
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      // The first attempt decides on a guess: what this instance last saw of the key, or, for a key it
      // has not seen, an empty key (after a start most keys are new: the bootstrap). The compare-and-set
      // write checks the guess. Every later attempt reads KV.
      const guess = attempt === 0 ? (this.versions.get(item.key) ?? NEW_KEY) : undefined;
      const entry = guess ?? (await this.read(item.key));
      if (entry.unreadable !== undefined) {
        this.options.logger.warn(
          { err: entry.unreadable, key: item.key },
          'unreadable applied-versions record; replacing it',
        );
      }
      const decision = decideApply({
        source: this.options.link.source,
        translation,
        stored: entry.record,
        targetCommit,
        nowMs: this.options.clock(),
      });
      const toWrite = recordToWrite(decision);
      if (toWrite === undefined) {
        // Nothing to write would check the guess: decide again on what KV holds.
        if (guess !== undefined) continue;
        return { item, decision };
      }
      const revision = await this.write(item.key, toWrite, entry.revision);
      if (revision !== undefined) return { item, decision, written: { revision, previous: entry.record } };
    }
    // Contention, not a failure of KV: other instances kept writing the key.
    throw new OffsetSyncError(
      `applied-versions key ${item.key} kept changing (${MAX_CAS_ATTEMPTS} attempts)`,
      { code: ErrorCodes.NATS_REJECTED, retryable: true, details: { key: item.key } },
    );
  }

  /**
   * What {@link reserve} would decide on what KV holds now, written nowhere: the decision of a link that
   * observes, which must leave the applied versions to the committer that commits. Rejects with the
   * store's error.
   */
  async decide(item: WorkItem, targetCommit: TargetCommit | undefined): Promise<ApplyDecision> {
    const entry = await this.read(item.key);
    return decideApply({
      source: this.options.link.source,
      translation: translationOf(item),
      stored: entry.record,
      targetCommit,
      nowMs: this.options.clock(),
    });
  }

  /**
   * Puts back the record a reservation replaced, after its Kafka commit failed or was withdrawn. Only
   * while KV still holds that reservation: a newer version reserved meanwhile by another instance stays.
   * `ownedSinceMs`: the commit was withdrawn because the application committed on the target; the
   * record put back says the target owns the position since then (written even when the decision
   * reserved nothing, a redelivery of the version KV holds).
   */
  async restore(r: Reservation, ownedSinceMs?: number): Promise<void> {
    if (r.decision.kind !== 'apply') return;
    if (r.written === undefined && ownedSinceMs === undefined) return;
    const reserved = r.decision.record;
    const previous = r.written === undefined ? reserved : r.written.previous;
    let { record: current, revision }: StoredEntry =
      r.written === undefined
        ? await this.read(r.item.key)
        : { record: reserved, revision: r.written.revision };
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      if (!holdsReservation(current, reserved)) return;
      const restored = restoredRecord(previous, current, ownedSinceMs);
      const done =
        restored === undefined
          ? await this.remove(r.item.key, revision)
          : (await this.write(r.item.key, restored, revision)) !== undefined;
      if (done) return;
      ({ record: current, revision } = await this.read(r.item.key));
    }
    this.options.logger.warn(
      { key: r.item.key },
      'could not restore the applied-versions record after a failed or withdrawn commit',
    );
  }

  /** Reads a key from KV and remembers what it holds. */
  async read(key: string): Promise<StoredEntry> {
    const entry = await this.reported(this.options.store.read(key));
    this.versions.set(key, entry);
    return entry;
  }

  /** Compare-and-set write; remembers the record written, forgets the key when another writer came first. */
  private async write(
    key: string,
    record: AppliedRecord,
    expectedRevision: number,
  ): Promise<number | undefined> {
    this.versions.forget(key);
    const revision = await this.reported(this.options.store.write(key, record, expectedRevision));
    if (revision !== undefined) this.versions.set(key, { record, revision });
    return revision;
  }

  private async remove(key: string, expectedRevision: number): Promise<boolean> {
    // The removal's own revision is not returned: the next use of the key reads KV.
    this.versions.forget(key);
    return this.reported(this.options.store.remove(key, expectedRevision));
  }

  /** Files a failed store call under `applied-versions store`; an answered one clears it. */
  private async reported<T>(call: Promise<T>): Promise<T> {
    try {
      const result = await call;
      this.options.problems?.recover(PipelineAreas.appliedVersions);
      return result;
    } catch (error: unknown) {
      this.options.problems?.fail(PipelineAreas.appliedVersions, error);
      throw error;
    }
  }
}
