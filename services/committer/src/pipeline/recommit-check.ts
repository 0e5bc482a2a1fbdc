// The check after a successful commit that the newest reserved version of each key is the last one
// written to Kafka.
//
// The race this closes: instance A reserves version 1 of a key, instance B then reserves version 2 and
// commits it, and only then does A's commit of version 1 reach the broker. Both commits succeed, and the
// target ends on the older offset although KV says version 2. Reservations are ordered by the
// compare-and-set, commits are not. So every instance, after its commit returned, reads the key again:
// when a newer version was reserved in the meantime, that version's offset is committed again, so the
// last write to Kafka is always the newest reserved version. (Whoever reserved the newest version
// reserved it before that version's own commit; any older commit that lands later is followed by its
// committer's check, which then sees the newest version and writes it once more.) A position the target
// owns is left alone, and so is what the target holds now when it forbids the commit: the target is read
// right before committing again, and a key is skipped when offsetsync's mark there holds a newer version
// (the floor: KV may have been lost and rebuilt with older versions) or the application committed there.
import type { Version } from '@offsetsync/contracts';
import type { AppliedRecord } from '../applied-record.js';
import type { Logger } from '@offsetsync/runtime';
import { newerReservation } from '../apply-decision.js';
import { mapWithConcurrency } from '../concurrency.js';
import { recommitBlocked } from '../target-reread.js';
import type { CommitReservation, Reservations } from './reservations.js';
import { commitEntry, type TargetCalls } from './target-calls.js';
import { KEY_CONCURRENCY, targetTopicOf, type Link, type WorkItem } from './work-item.js';

/** Rounds of the check before the next source commit is left to settle what still changes. */
const MAX_RECOMMIT_ROUNDS = 5;

/** What the check needs. */
export interface RecommitCheckOptions {
  link: Link;
  target: TargetCalls;
  reservations: Reservations;
  logger: Logger;
}

/** Commits again the newer versions reserved while this instance's commit was in flight. */
export class RecommitCheck {
  constructor(private readonly options: RecommitCheckOptions) {}

  /**
   * Runs the check for the keys of `applied` (committed by this instance for `group`). Never rejects:
   * the commit itself succeeded and is reported; the instance that reserved the newer version, or the
   * next source commit, brings the target to the newest version.
   */
  async run(group: string, applied: readonly CommitReservation[]): Promise<void> {
    const { reservations, target, logger, link } = this.options;
    let watched: { item: WorkItem; version: Version }[] = applied.map((r) => ({
      item: r.item,
      version: r.decision.record.version!,
    }));
    try {
      for (let round = 0; round < MAX_RECOMMIT_ROUNDS && watched.length > 0; round++) {
        const newer = (
          await mapWithConcurrency(watched, KEY_CONCURRENCY, async (w) => {
            const { record } = await reservations.read(w.item.key);
            const newest = newerReservation(record, w.version);
            return newest === undefined ? undefined : { item: w.item, record: newest };
          })
        ).filter((n) => n !== undefined);
        if (newer.length === 0) return;
        const allowed = await this.allowedByTarget(group, newer);
        if (allowed.length === 0) return;
        logger.debug(
          { group, keys: allowed.length },
          'newer versions were reserved while committing; committing them again so they are written last',
        );
        const answers = await target.commitOffsets(
          group,
          allowed.map((n) => commitEntry(link.source, n.item.translation, n.record)),
        );
        watched = allowed
          .filter((_, i) => answers[i]?.error === undefined)
          .map((n) => ({ item: n.item, version: n.record.version! }));
      }
      if (watched.length > 0) {
        logger.warn(
          { group, keys: watched.length },
          'versions kept changing after the commit; the next source commit settles them',
        );
      }
    } catch (error: unknown) {
      logger.warn({ err: error, group }, 'post-commit check failed');
    }
  }

  /** The keys whose newer version the target's committed offsets, read now, allow to be committed again. */
  private async allowedByTarget<T extends { item: WorkItem; record: AppliedRecord }>(
    group: string,
    newer: readonly T[],
  ): Promise<T[]> {
    const { target, link, logger } = this.options;
    const committed = await target.fetchCommittedOffsets(group, [
      ...new Set(newer.map((n) => targetTopicOf(n.item.translation))),
    ]);
    const commitOf = new Map(committed.map((c) => [`${c.topic}\u0000${c.partition}`, c]));
    return newer.filter((n) => {
      const topic = targetTopicOf(n.item.translation);
      const { partition } = n.item.translation;
      const blocked = recommitBlocked(link.source, n.record, commitOf.get(`${topic}\u0000${partition}`));
      if (blocked !== undefined) {
        logger.info(
          { group, topic, partition, reason: blocked },
          'not committing a newer reserved version again',
        );
      }
      return blocked === undefined;
    });
  }
}
