// The target partitions' log bounds as last read, so that the bound check of a commit costs no Kafka
// call in the common case. A partition's log end offset only grows (an unclean leader election can
// truncate it; the translator notices that and translates again), so a cached log end is a lower bound
// of today's: an offset at or below it is within the upper bound, whatever the entry's age. Only an
// offset above it (or a partition never read) needs a fresh read, and that read is made after the event
// was received, so it sees every record the translator could have seen. The log start offset is judged
// against the start read at the same time, which is what this misses: retention (or DeleteRecords) moves
// the log start forward between reads, so an offset between the cached start and today's start passes
// as within. A consumer resuming there is reset by its auto.offset.reset, as it would be had the records
// been deleted right after the commit; a read per commit would not close that race either.
import { ErrorCodes, isOffsetSyncError, type OffsetSyncError } from '@offsetsync/contracts';
import type { PartitionBounds, TopicPartition } from '@offsetsync/kafka';
import { logBoundsVerdict } from './log-bounds.js';

/** Reads the bounds of partitions in one batched call, answers in request order (KafkaAdapter.partitionBounds). */
export type ReadPartitionBounds = (
  partitions: readonly TopicPartition[],
) => Promise<Array<PartitionBounds | OffsetSyncError>>;

interface CachedBounds {
  bounds: PartitionBounds;
  /** Which read produced them: a slower, older read never replaces what a newer one stored. */
  read: number;
}

function keyOf(tp: TopicPartition): string {
  return `${tp.topic}\u0000${tp.partition}`;
}

/** Log bounds of target partitions: looked up in memory, read again only when asked to. */
export class LogBoundsCache {
  private readonly entries = new Map<string, CachedBounds>();
  private reads = 0;

  /** @param capacity most partitions kept; the least recently used go first. Default: `100000`. */
  constructor(
    private readonly readBounds: ReadPartitionBounds,
    private readonly capacity = 100_000,
  ) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw new RangeError(`log bounds cache capacity must be a positive integer, not ${capacity}`);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  /** The bounds last read for the partition, if any. */
  cached(tp: TopicPartition): PartitionBounds | undefined {
    const key = keyOf(tp);
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    // Map keeps insertion order: re-inserting makes the partition the most recently used.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.bounds;
  }

  /**
   * True when the cached bounds show `offset` within the partition's log, so no read is needed; false
   * when only a fresh read can tell (nothing cached, or the offset is outside what was cached: above the
   * cached end the log may have grown since, below the cached start the topic may have been created
   * again).
   */
  withinCached(tp: TopicPartition, offset: number): boolean {
    const bounds = this.cached(tp);
    return bounds !== undefined && logBoundsVerdict(offset, bounds) === 'within';
  }

  /**
   * Reads the partitions' bounds now, in one call (one ListOffsets pair per leader broker), remembers
   * them and resolves with them in request order, an error in place of a partition that could not be
   * read. A partition missing on the target is forgotten. Rejects when the call as a whole failed.
   */
  async refresh(partitions: readonly TopicPartition[]): Promise<Array<PartitionBounds | OffsetSyncError>> {
    if (partitions.length === 0) return [];
    const read = ++this.reads;
    const answers = await this.readBounds(partitions);
    partitions.forEach((tp, i) => {
      const answer = answers[i];
      const key = keyOf(tp);
      const current = this.entries.get(key);
      if (current !== undefined && current.read > read) return;
      if (answer === undefined) return;
      if (isOffsetSyncError(answer)) {
        if (answer.code === ErrorCodes.TOPIC_MISSING || answer.code === ErrorCodes.PARTITION_MISSING)
          this.entries.delete(key);
        return;
      }
      this.entries.delete(key);
      this.entries.set(key, { bounds: answer, read });
      if (this.entries.size > this.capacity) {
        const oldest = this.entries.keys().next().value;
        if (oldest !== undefined) this.entries.delete(oldest);
      }
    });
    return answers;
  }
}
