// Decodes records of Kafka's `__consumer_offsets` topic (the group coordinator's log). Pure: bytes in,
// a typed record out, or an OffsetSyncError whose code says whether the bytes were malformed
// (DECODE_ERROR) or of a type or version this build does not know (UNKNOWN_RECORD). The caller
// counts and skips both; nothing here may stop the collector.
//
// Layout: the key starts with an int16 record type (for offset commits also called the key version),
// the value with an int16 value version. A null value is a tombstone.
import { ErrorCodes, isOffsetSyncError, OffsetSyncError, type Version } from '@offsetsync/contracts';
import { KafkaReader } from '@offsetsync/kafka';

/** A record as it comes off the offsets topic. */
export interface RawOffsetsRecord {
  offset: number;
  key: Buffer | null;
  value: Buffer | null;
}

/** A committed offset (key types 0 and 1). */
export interface OffsetCommitRecord {
  kind: 'offset-commit';
  keyType: 0 | 1;
  valueVersion: number;
  group: string;
  topic: string;
  partition: number;
  offset: number;
  /** -1 when the committer did not say (value versions before 3, or clients that send none). */
  leaderEpoch: number;
  metadata: string;
  commitTimestampMs: number;
  /** Only value version 1 carries it; -1 otherwise. */
  expireTimestampMs: number;
  /** The topic's id, written by newer brokers as a tagged field of value version 4. */
  topicId?: string;
}

/** An offset tombstone: the offset was deleted by an admin or expired. */
export interface OffsetDeletedRecord {
  kind: 'offset-deleted';
  keyType: 0 | 1;
  group: string;
  topic: string;
  partition: number;
}

/** A classic group's metadata (key type 2). Its value (members, assignment) is not needed and not decoded. */
export interface GroupMetadataRecord {
  kind: 'group-metadata';
  group: string;
}

/** A group's metadata tombstone: the group was deleted. */
export interface GroupDeletedRecord {
  kind: 'group-deleted';
  recordType: number;
  group: string;
}

/** A record of the newer coordinator types (KIP-848 consumer groups, share groups, streams groups, regular expressions): recognised, nothing to do. */
export interface OtherCoordinatorRecord {
  kind: 'coordinator-record';
  recordType: number;
  name: string;
}

export type OffsetsTopicRecord =
  | OffsetCommitRecord
  | OffsetDeletedRecord
  | GroupMetadataRecord
  | GroupDeletedRecord
  | OtherCoordinatorRecord;

/** The newest OffsetCommitValue version this build understands. */
export const MAX_OFFSET_COMMIT_VALUE_VERSION = 4;

/**
 * Coordinator record types after the three classic ones, by the name Kafka gives their key schema.
 * Types 9 and 18 existed in early 4.x releases and were later withdrawn.
 */
const NEWER_RECORD_TYPES: ReadonlyMap<number, string> = new Map([
  [3, 'ConsumerGroupMetadata'],
  [4, 'ConsumerGroupPartitionMetadata'],
  [5, 'ConsumerGroupMemberMetadata'],
  [6, 'ConsumerGroupTargetAssignmentMetadata'],
  [7, 'ConsumerGroupTargetAssignmentMember'],
  [8, 'ConsumerGroupCurrentMemberAssignment'],
  [9, 'ShareGroupPartitionMetadata'],
  [10, 'ShareGroupMemberMetadata'],
  [11, 'ShareGroupMetadata'],
  [12, 'ShareGroupTargetAssignmentMetadata'],
  [13, 'ShareGroupTargetAssignmentMember'],
  [14, 'ShareGroupCurrentMemberAssignment'],
  [15, 'ShareGroupStatePartitionMetadata'],
  [16, 'ConsumerGroupRegularExpression'],
  [17, 'StreamsGroupMetadata'],
  [18, 'StreamsGroupPartitionMetadata'],
  [19, 'StreamsGroupMemberMetadata'],
  [20, 'StreamsGroupTargetAssignmentMetadata'],
  [21, 'StreamsGroupTargetAssignmentMember'],
  [22, 'StreamsGroupCurrentMemberAssignment'],
  [23, 'StreamsGroupTopology'],
]);

/** Group-level metadata records of the newer group types: their tombstone means the group is gone. */
const GROUP_METADATA_TYPES: ReadonlySet<number> = new Set([3, 11, 17]);

/** Tag of the topic id in OffsetCommitValue version 4. */
const TOPIC_ID_TAG = 0;

function unknownRecord(message: string, details: Record<string, unknown>): OffsetSyncError {
  return new OffsetSyncError(message, { code: ErrorCodes.UNKNOWN_RECORD, details });
}

function malformed(message: string, details: Record<string, unknown>, cause?: unknown): OffsetSyncError {
  return new OffsetSyncError(message, { code: ErrorCodes.DECODE_ERROR, details, cause });
}

/**
 * Decodes one record. Throws OffsetSyncError with code UNKNOWN_RECORD (details: keyType and, when
 * known, valueVersion) or DECODE_ERROR; never anything else.
 */
export function decodeOffsetsTopicRecord(key: Buffer | null, value: Buffer | null): OffsetsTopicRecord {
  if (key === null || key.length < 2) throw malformed('record key is missing or shorter than 2 bytes', {});
  const keyReader = new KafkaReader(key);
  const keyType = keyReader.int16();
  try {
    switch (keyType) {
      case 0:
      case 1:
        return decodeOffsetCommit(keyType, keyReader, value);
      case 2: {
        const group = keyReader.string();
        expectEnd(keyReader, 'group metadata key');
        return value === null
          ? { kind: 'group-deleted', recordType: 2, group }
          : { kind: 'group-metadata', group };
      }
      default:
        return decodeNewerRecord(keyType, keyReader, value);
    }
  } catch (error: unknown) {
    if (
      error instanceof OffsetSyncError &&
      error.code === ErrorCodes.DECODE_ERROR &&
      error.details?.keyType === undefined
    ) {
      // Reader errors know the byte position but not which record; add it.
      throw malformed(error.message, { keyType }, error);
    }
    throw error;
  }
}

function decodeOffsetCommit(
  keyType: 0 | 1,
  keyReader: KafkaReader,
  value: Buffer | null,
): OffsetsTopicRecord {
  const group = keyReader.string();
  const topic = keyReader.string();
  const partition = keyReader.int32();
  expectEnd(keyReader, 'offset commit key');
  if (value === null) return { kind: 'offset-deleted', keyType, group, topic, partition };

  const reader = new KafkaReader(value);
  const valueVersion = reader.int16();
  if (valueVersion < 0 || valueVersion > MAX_OFFSET_COMMIT_VALUE_VERSION) {
    throw unknownRecord(`offset commit value version ${valueVersion} is not supported`, {
      keyType,
      valueVersion,
    });
  }
  const offset = reader.int64();
  const leaderEpoch = valueVersion >= 3 ? reader.int32() : -1;
  const metadata = valueVersion >= 4 ? reader.compactString() : reader.string();
  const commitTimestampMs = reader.int64();
  const expireTimestampMs = valueVersion === 1 ? reader.int64() : -1;
  let topicId: string | undefined;
  if (valueVersion >= 4) {
    reader.taggedFields((tag, size, tagged) => {
      if (tag !== TOPIC_ID_TAG || size !== 16) return false;
      topicId = tagged.uuid();
      return true;
    });
  }
  expectEnd(reader, `offset commit value v${valueVersion}`);
  return {
    kind: 'offset-commit',
    keyType,
    valueVersion,
    group,
    topic,
    partition,
    offset,
    leaderEpoch,
    metadata,
    commitTimestampMs,
    expireTimestampMs,
    ...(topicId === undefined ? {} : { topicId }),
  };
}

function decodeNewerRecord(
  recordType: number,
  keyReader: KafkaReader,
  value: Buffer | null,
): OffsetsTopicRecord {
  const name = NEWER_RECORD_TYPES.get(recordType);
  if (name === undefined) {
    const valueVersion = value !== null && value.length >= 2 ? value.readInt16BE(0) : undefined;
    throw unknownRecord(`offsets topic record type ${recordType} is not known`, {
      keyType: recordType,
      valueVersion,
    });
  }
  if (value === null && GROUP_METADATA_TYPES.has(recordType)) {
    // Every newer key starts with the group id.
    return { kind: 'group-deleted', recordType, group: keyReader.string() };
  }
  return { kind: 'coordinator-record', recordType, name };
}

function expectEnd(reader: KafkaReader, what: string): void {
  if (reader.remaining !== 0) {
    throw malformed(`${reader.remaining} unexpected bytes after the ${what}`, {});
  }
}

/** A decoded record with its version: its position in the offsets topic. */
export interface DecodedRecord {
  record: OffsetsTopicRecord;
  version: Version;
}

/** A record that could not be decoded, and what kind of problem that was. */
export interface UndecodableRecord {
  offsetsPartition: number;
  offset: number;
  error: unknown;
  /** True for a type or version this build does not know (UNKNOWN_RECORD), false for malformed bytes. */
  unknown: boolean;
  keyType: number | undefined;
  valueVersion: number | undefined;
}

/**
 * Decodes the records of one offsets-topic partition, in order. A record that does not decode is returned
 * apart, with what its error says about it, for the caller to count and skip.
 */
export function decodeRecords(
  offsetsPartition: number,
  records: readonly RawOffsetsRecord[],
): { decoded: DecodedRecord[]; undecodable: UndecodableRecord[] } {
  const decoded: DecodedRecord[] = [];
  const undecodable: UndecodableRecord[] = [];
  for (const raw of records) {
    try {
      const record = decodeOffsetsTopicRecord(raw.key, raw.value);
      decoded.push({ record, version: { offsetsPartition, offsetsOffset: raw.offset } });
    } catch (error: unknown) {
      undecodable.push({ offsetsPartition, offset: raw.offset, error, ...describeFailure(error) });
    }
  }
  return { decoded, undecodable };
}

function describeFailure(error: unknown): Pick<UndecodableRecord, 'unknown' | 'keyType' | 'valueVersion'> {
  const details = isOffsetSyncError(error) ? error.details : undefined;
  return {
    unknown: isOffsetSyncError(error) && error.code === ErrorCodes.UNKNOWN_RECORD,
    keyType: typeof details?.keyType === 'number' ? details.keyType : undefined,
    valueVersion: typeof details?.valueVersion === 'number' ? details.valueVersion : undefined,
  };
}
