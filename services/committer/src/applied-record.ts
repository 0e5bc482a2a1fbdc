// What the committer remembers per link and group partition in the applied-versions KV bucket, and its
// JSON encoding. Pure.
import { ErrorCodes, OffsetSyncError, type Version } from '@offsetsync/contracts';

/**
 * The state of one (source, target, group, topic, partition) on the target, as the committers agree on
 * it through compare-and-set.
 */
export interface AppliedRecord {
  /**
   * The newest source version reserved for the target: written just before its Kafka commit and
   * restored to the previous record when that commit fails. `null` when no version was applied yet and
   * the record only says that the target owns the position.
   */
  version: Version | null;
  /** The offset committed on the target for `version`; -1 with no version. */
  targetOffset: number;
  /**
   * When `version` was reserved, right before its Kafka commit (epoch ms; 0 with no version). The
   * OffsetApplied event carries the time the commit itself returned.
   */
  appliedAtMs: number;
  /** The source commit time of `version` (epoch ms; 0 with no version). */
  sourceCommitTimestampMs: number;
  /**
   * Set while the application owns the position on the target: when the committer first saw a commit
   * on the target that offsetsync did not write (epoch ms). Cleared by applying a source commit made
   * after it.
   */
  targetOwnedSinceMs?: number;
}

/** A record that holds nothing: no applied version, no ownership. */
export const EMPTY_RECORD: AppliedRecord = Object.freeze({
  version: null,
  targetOffset: -1,
  appliedAtMs: 0,
  sourceCommitTimestampMs: 0,
});

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

export function encodeAppliedRecord(record: AppliedRecord): Uint8Array {
  const json: Record<string, unknown> = {
    version:
      record.version === null
        ? null
        : { offsetsPartition: record.version.offsetsPartition, offsetsOffset: record.version.offsetsOffset },
    targetOffset: record.targetOffset,
    appliedAtMs: record.appliedAtMs,
    sourceCommitTimestampMs: record.sourceCommitTimestampMs,
  };
  if (record.targetOwnedSinceMs !== undefined) json.targetOwnedSinceMs = record.targetOwnedSinceMs;
  return encoder.encode(JSON.stringify(json));
}

/** Decodes a stored record; throws DECODE_ERROR for anything this build did not write. */
export function decodeAppliedRecord(bytes: Uint8Array): AppliedRecord {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(bytes));
  } catch (cause: unknown) {
    throw malformed('not JSON', cause);
  }
  if (!isObject(value)) throw malformed('not an object');
  const { version, targetOffset, appliedAtMs, sourceCommitTimestampMs, targetOwnedSinceMs } = value;
  let decodedVersion: Version | null = null;
  if (version !== null) {
    if (!isObject(version) || !isCount(version.offsetsPartition) || !isCount(version.offsetsOffset)) {
      throw malformed('bad version');
    }
    decodedVersion = { offsetsPartition: version.offsetsPartition, offsetsOffset: version.offsetsOffset };
  }
  if (!isInteger(targetOffset) || targetOffset < -1) throw malformed('bad targetOffset');
  if (!isCount(appliedAtMs)) throw malformed('bad appliedAtMs');
  if (!isInteger(sourceCommitTimestampMs)) throw malformed('bad sourceCommitTimestampMs');
  if (targetOwnedSinceMs !== undefined && !isCount(targetOwnedSinceMs)) {
    throw malformed('bad targetOwnedSinceMs');
  }
  const record: AppliedRecord = {
    version: decodedVersion,
    targetOffset,
    appliedAtMs,
    sourceCommitTimestampMs,
  };
  if (targetOwnedSinceMs !== undefined) record.targetOwnedSinceMs = targetOwnedSinceMs;
  return record;
}

function malformed(what: string, cause?: unknown): OffsetSyncError {
  return new OffsetSyncError(`applied-versions record: ${what}`, { code: ErrorCodes.DECODE_ERROR, cause });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value);
}

function isCount(value: unknown): value is number {
  return isInteger(value) && value >= 0;
}
