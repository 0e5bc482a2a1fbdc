// Writes records in the `__consumer_offsets` format. The broker writes the real ones; this exists for
// tests, fixtures and benchmarks that feed the collector through a topic of the same format.
import { KafkaWriter } from '@offsetsync/kafka';
import { MAX_OFFSET_COMMIT_VALUE_VERSION } from './offsets-topic-decoder.js';

export interface OffsetCommitFields {
  keyType?: 0 | 1;
  valueVersion?: number;
  group: string;
  topic: string;
  partition: number;
  offset: number;
  leaderEpoch?: number;
  metadata?: string;
  commitTimestampMs: number;
  expireTimestampMs?: number;
  /** 16 bytes; written only by value version 4. */
  topicId?: Buffer;
}

export function encodeOffsetCommitKey(
  fields: Pick<OffsetCommitFields, 'keyType' | 'group' | 'topic' | 'partition'>,
): Buffer {
  return new KafkaWriter()
    .int16(fields.keyType ?? 1)
    .nullableString(fields.group)
    .nullableString(fields.topic)
    .int32(fields.partition)
    .build();
}

export function encodeOffsetCommitValue(fields: OffsetCommitFields): Buffer {
  const version = fields.valueVersion ?? MAX_OFFSET_COMMIT_VALUE_VERSION;
  const writer = new KafkaWriter().int16(version).int64(fields.offset);
  if (version >= 3) writer.int32(fields.leaderEpoch ?? -1);
  if (version >= 4) writer.compactNullableString(fields.metadata ?? '');
  else writer.nullableString(fields.metadata ?? '');
  writer.int64(fields.commitTimestampMs);
  if (version === 1) writer.int64(fields.expireTimestampMs ?? -1);
  if (version >= 4)
    writer.taggedFields(fields.topicId === undefined ? [] : [{ tag: 0, value: fields.topicId }]);
  return writer.build();
}

export function encodeGroupMetadataKey(group: string, recordType = 2): Buffer {
  return new KafkaWriter().int16(recordType).nullableString(group).build();
}
