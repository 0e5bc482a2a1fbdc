// The applied-versions KV bucket, read and written with compare-and-set so that any number of committer
// instances agree on the newest version per key.
import { ErrorCodes, isOffsetSyncError, OffsetSyncError } from '@offsetsync/contracts';
import { JetStreamApiError, WRONG_LAST_SEQUENCE, type JetStreamPublisher } from '@offsetsync/jetstream';
import { headers } from 'nats';
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

/** The KV bucket's key operation header, as nats.js writes it: DEL and PURGE mark a removed key. */
const KV_OPERATION = 'kv-operation';

/**
 * The bucket's stream read and written directly through a JetStreamPublisher (the way nats.js's KV does,
 * without its per-request costs). Reads go to the stream's leader, so a read that follows a write sees it.
 */
export class KvAppliedVersionsStore implements AppliedVersionsStore {
  private readonly stream: string;
  private readonly subjectPrefix: string;

  constructor(
    private readonly publisher: JetStreamPublisher,
    bucket: string,
  ) {
    this.stream = `KV_${bucket}`;
    this.subjectPrefix = `$KV.${bucket}.`;
  }

  async read(key: string): Promise<StoredEntry> {
    let message;
    try {
      message = await this.publisher.lastMessage(this.stream, this.subjectPrefix + key);
    } catch (error: unknown) {
      throw unreachable('read', key, error);
    }
    if (message === undefined) return { record: undefined, revision: 0 };
    const operation = message.headers.get(KV_OPERATION);
    if (operation === 'DEL' || operation === 'PURGE') return { record: undefined, revision: message.seq };
    try {
      return { record: decodeAppliedRecord(message.data), revision: message.seq };
    } catch (error: unknown) {
      if (!isOffsetSyncError(error)) throw error;
      return { record: undefined, revision: message.seq, unreadable: error };
    }
  }

  async write(key: string, record: AppliedRecord, expectedRevision: number): Promise<number | undefined> {
    try {
      // Expected revision 0 means "the key holds nothing": it conflicts with a removed key too, and the
      // caller decides again on what it then reads.
      const ack = await this.publisher.publish(this.subjectPrefix + key, encodeAppliedRecord(record), {
        expectedLastSubjectSequence: expectedRevision,
      });
      return ack.seq;
    } catch (error: unknown) {
      if (isConflict(error)) return undefined;
      throw unreachable('write', key, error);
    }
  }

  async remove(key: string, expectedRevision: number): Promise<boolean> {
    const hdrs = headers();
    hdrs.set('KV-Operation', 'DEL');
    try {
      await this.publisher.publish(this.subjectPrefix + key, new Uint8Array(0), {
        headers: hdrs,
        expectedLastSubjectSequence: expectedRevision,
      });
      return true;
    } catch (error: unknown) {
      if (isConflict(error)) return false;
      throw unreachable('remove', key, error);
    }
  }
}

function isConflict(error: unknown): boolean {
  return error instanceof JetStreamApiError && error.errCode === WRONG_LAST_SEQUENCE;
}
function unreachable(operation: string, key: string, cause: unknown): OffsetSyncError {
  return new OffsetSyncError(`applied-versions ${operation} of ${key} failed`, {
    code: ErrorCodes.NATS_UNREACHABLE,
    retryable: true,
    cause,
    details: { key },
  });
}
