// A JetStream KV bucket read and written with compare-and-set, so that any number of instances agree on
// the value of a key: get with its revision, create if absent, update if still at a revision, remove if
// still at a revision. What the values mean is the caller's business.
//
// The bucket's stream is read and written directly through a JetStreamPublisher (the way nats.js's KV
// does, without its per-request costs). Reads go to the stream's leader, so a read that follows a write
// sees it.
import { ErrorCodes, isOffsetSyncError, OffsetSyncError } from '@offsetsync/contracts';
import { headers } from 'nats';
import { JetStreamApiError, WRONG_LAST_SEQUENCE, type JetStreamPublisher } from './jetstream-publisher.js';

/** A key's value and the revision a compare-and-set write must name. */
export interface KvCasEntry {
  /** Undefined when the key was never written or was removed. */
  value: Uint8Array | undefined;
  /** The revision of the key's last write (a removal counts); 0 when it was never written. */
  revision: number;
}

/** The publisher calls the store uses (a JetStreamPublisher has them). */
export type KvCasPublisher = Pick<JetStreamPublisher, 'publish' | 'lastMessage'>;

/** The KV bucket's key operation header, as nats.js writes it: DEL and PURGE mark a removed key. */
const KV_OPERATION = 'kv-operation';

/**
 * One JetStream KV bucket with compare-and-set. Every failure other than a lost compare-and-set rejects
 * with a retryable {@link OffsetSyncError} under the code of what went wrong (NATS_UNREACHABLE,
 * TIMEOUT, NATS_REJECTED...); a lost compare-and-set is an answer, not an error.
 */
export class KvCasStore {
  private readonly stream: string;
  private readonly subjectPrefix: string;

  /**
   * @param publisher the connection's publisher (its reads go to the stream leader)
   * @param bucket the KV bucket's name; it must exist (see provisionKvBucket)
   */
  constructor(
    private readonly publisher: KvCasPublisher,
    readonly bucket: string,
  ) {
    this.stream = `KV_${bucket}`;
    this.subjectPrefix = `$KV.${bucket}.`;
  }

  /** The key's value and revision. */
  async get(key: string): Promise<KvCasEntry> {
    let message;
    try {
      message = await this.publisher.lastMessage(this.stream, this.subjectPrefix + key);
    } catch (error: unknown) {
      throw this.failure('get', key, error);
    }
    if (message === undefined) return { value: undefined, revision: 0 };
    const operation = message.headers.get(KV_OPERATION);
    if (operation === 'DEL' || operation === 'PURGE') return { value: undefined, revision: message.seq };
    return { value: message.data, revision: message.seq };
  }

  /**
   * Writes `value` if the key was never written. Returns the new revision, or undefined when the key
   * holds a value or was removed (a removal is a revision too: the caller reads and updates instead).
   */
  create(key: string, value: Uint8Array): Promise<number | undefined> {
    return this.put('create', key, value, 0);
  }

  /**
   * Writes `value` if the key is still at `revision`. Returns the new revision, or undefined when another
   * writer came first.
   */
  update(key: string, value: Uint8Array, revision: number): Promise<number | undefined> {
    return this.put('update', key, value, revision);
  }

  /** Removes the key if it is still at `revision`. Returns false when another writer came first. */
  async remove(key: string, revision: number): Promise<boolean> {
    const hdrs = headers();
    hdrs.set('KV-Operation', 'DEL');
    try {
      await this.publisher.publish(this.subjectPrefix + key, new Uint8Array(0), {
        headers: hdrs,
        expectedLastSubjectSequence: revision,
      });
      return true;
    } catch (error: unknown) {
      if (isConflict(error)) return false;
      throw this.failure('remove', key, error);
    }
  }

  private async put(
    operation: 'create' | 'update',
    key: string,
    value: Uint8Array,
    expectedRevision: number,
  ): Promise<number | undefined> {
    try {
      // Expected revision 0 means "the key holds nothing": it conflicts with a removed key too.
      const ack = await this.publisher.publish(this.subjectPrefix + key, value, {
        expectedLastSubjectSequence: expectedRevision,
      });
      return ack.seq;
    } catch (error: unknown) {
      if (isConflict(error)) return undefined;
      throw this.failure(operation, key, error);
    }
  }

  private failure(operation: string, key: string, cause: unknown): OffsetSyncError {
    return new OffsetSyncError(`KV ${this.bucket}: ${operation} of ${key} failed`, {
      // The cause's own code when it has one (a timeout is not an unreachable server).
      code: isOffsetSyncError(cause) ? cause.code : ErrorCodes.NATS_UNREACHABLE,
      retryable: true,
      cause,
      details: { bucket: this.bucket, key },
    });
  }
}

function isConflict(error: unknown): boolean {
  return error instanceof JetStreamApiError && error.errCode === WRONG_LAST_SEQUENCE;
}
