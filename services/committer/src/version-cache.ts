// What this instance last read from or wrote to the applied-versions KV, per key: the fast path of the
// compare-and-set. A reservation names the cached revision; when another instance wrote the key since, the
// write fails, the entry is forgotten and KV is read. KV stays the source of truth: nothing is decided from
// the cache without a write that checks it (see CommitPipeline.reserve).
import type { StoredEntry } from './applied-versions-store.js';

export class VersionCache {
  private readonly entries = new Map<string, StoredEntry>();

  /** @param capacity most keys kept; the least recently used go first. */
  constructor(private readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw new RangeError(`version cache capacity must be a positive integer, not ${capacity}`);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): StoredEntry | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    // Map keeps insertion order: re-inserting makes the key the most recently used.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry;
  }

  /** Remembers a key's record and revision; an unreadable record is not remembered. */
  set(key: string, entry: StoredEntry): void {
    this.entries.delete(key);
    if (entry.unreadable !== undefined) return;
    this.entries.set(key, { record: entry.record, revision: entry.revision });
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  forget(key: string): void {
    this.entries.delete(key);
  }
}
