// The applied-versions KV bucket, read and written with compare-and-set so that any number of committer
// instances agree on the newest version per key.
import { ErrorCodes, isOffsetSyncError, OffsetSyncError } from '@offsetsync/common';
import type { KV } from 'nats';
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

/** JetStream's answer to a publish whose expected last subject sequence did not match. */
const WRONG_LAST_SEQUENCE = 10071;

export class KvAppliedVersionsStore implements AppliedVersionsStore {
  constructor(private readonly kv: KV) {}

  async read(key: string): Promise<StoredEntry> {
    let entry;
    try {
      entry = await this.kv.get(key);
    } catch (error: unknown) {
      throw unreachable('read', key, error);
    }
    if (entry === null) return { record: undefined, revision: 0 };
    if (entry.operation !== 'PUT') return { record: undefined, revision: entry.revision };
    try {
      return { record: decodeAppliedRecord(entry.value), revision: entry.revision };
    } catch (error: unknown) {
      if (!isOffsetSyncError(error)) throw error;
      return { record: undefined, revision: entry.revision, unreadable: error };
    }
  }

  async write(key: string, record: AppliedRecord, expectedRevision: number): Promise<number | undefined> {
    const value = encodeAppliedRecord(record);
    try {
      // kv.create would, on a conflict with a removed key, quietly retry as an update; the caller decides
      // instead, so a revision of 0 is sent as "expect no message" directly.
      return expectedRevision === 0
        ? await this.kv.put(key, value, { previousSeq: 0 })
        : await this.kv.update(key, value, expectedRevision);
    } catch (error: unknown) {
      if (isConflict(error)) return undefined;
      throw unreachable('write', key, error);
    }
  }

  async remove(key: string, expectedRevision: number): Promise<boolean> {
    try {
      await this.kv.delete(key, { previousSeq: expectedRevision });
      return true;
    } catch (error: unknown) {
      if (isConflict(error)) return false;
      throw unreachable('remove', key, error);
    }
  }
}

function isConflict(error: unknown): boolean {
  return (error as { api_error?: { err_code?: number } }).api_error?.err_code === WRONG_LAST_SEQUENCE;
}

function unreachable(operation: string, key: string, cause: unknown): OffsetSyncError {
  return new OffsetSyncError(`applied-versions ${operation} of ${key} failed`, {
    code: ErrorCodes.NATS_UNREACHABLE,
    retryable: true,
    cause,
    details: { key },
  });
}
