// The applied-versions KV bucket: the committer's AppliedRecord per key, read and written with
// compare-and-set (packages/jetstream's KvCasStore) so that any number of committer instances agree on
// the newest version per key.
import { isOffsetSyncError, type OffsetSyncError } from '@offsetsync/contracts';
import { KvCasStore, type JetStreamPublisher } from '@offsetsync/jetstream';
import { decodeAppliedRecord, encodeAppliedRecord, type AppliedRecord } from './applied-record.js';

/** A key's record and the revision a compare-and-set write must name. */
export interface StoredEntry {
  /** Undefined when the key was never written or was removed. */
  record: AppliedRecord | undefined;
  /** The revision of the key's last write (a removal counts); 0 when it was never written. */
  revision: number;
  /**
   * Set when the stored value could not be decoded; `record` is then undefined, so the next
   * compare-and-set write replaces it.
   */
  unreadable?: OffsetSyncError;
}

/** The applied-versions records with compare-and-set; rejects with a retryable error when KV fails. */
export interface AppliedVersionsStore {
  read(key: string): Promise<StoredEntry>;
  /**
   * Writes `record` if the key is still at `expectedRevision` (0: never written). Returns the new
   * revision, or undefined when another writer came first.
   */
  write(key: string, record: AppliedRecord, expectedRevision: number): Promise<number | undefined>;
  /** Removes the key if it is still at `expectedRevision`. Returns false when another writer came first. */
  remove(key: string, expectedRevision: number): Promise<boolean>;
}

/** What turns a failed KV call into the error to report (see AppliedVersionsBucket.explain). */
export interface KvFailureExplainer {
  explain(error: unknown): Promise<unknown>;
}

/**
 * The applied-versions bucket over JetStream KV: the AppliedRecord codec on a {@link KvCasStore}. A
 * failed call is explained by `bucket` when given (a missing bucket is said so and created again).
 */
export class KvAppliedVersionsStore implements AppliedVersionsStore {
  private readonly kv: KvCasStore;

  constructor(
    publisher: JetStreamPublisher,
    bucket: string,
    private readonly failures?: KvFailureExplainer,
  ) {
    this.kv = new KvCasStore(publisher, bucket);
  }

  async read(key: string): Promise<StoredEntry> {
    const { value, revision } = await this.explained(this.kv.get(key));
    if (value === undefined) return { record: undefined, revision };
    try {
      return { record: decodeAppliedRecord(value), revision };
    } catch (error: unknown) {
      if (!isOffsetSyncError(error)) throw error;
      return { record: undefined, revision, unreadable: error };
    }
  }

  write(key: string, record: AppliedRecord, expectedRevision: number): Promise<number | undefined> {
    // Expected revision 0 means "the key holds nothing": it conflicts with a removed key too, and the
    // caller decides again on what it then reads.
    const value = encodeAppliedRecord(record);
    return this.explained(
      expectedRevision === 0 ? this.kv.create(key, value) : this.kv.update(key, value, expectedRevision),
    );
  }

  remove(key: string, expectedRevision: number): Promise<boolean> {
    return this.explained(this.kv.remove(key, expectedRevision));
  }

  private async explained<T>(call: Promise<T>): Promise<T> {
    try {
      return await call;
    } catch (error: unknown) {
      throw this.failures === undefined ? error : await this.failures.explain(error);
    }
  }
}
