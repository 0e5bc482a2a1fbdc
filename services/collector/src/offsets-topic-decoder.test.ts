import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import { KafkaWriter } from '@offsetsync/kafka';
import { decodeOffsetsTopicRecord, MAX_OFFSET_COMMIT_VALUE_VERSION } from './offsets-topic-decoder.js';
import {
  encodeGroupMetadataKey,
  encodeOffsetCommitKey,
  encodeOffsetCommitValue,
} from './offsets-topic-encoder.js';

function decodeError(fn: () => unknown): OffsetSyncError {
  try {
    fn();
  } catch (error: unknown) {
    if (error instanceof OffsetSyncError) return error;
    throw new Error(`expected an OffsetSyncError, got ${String(error)}`, { cause: error });
  }
  throw new Error('expected decoding to fail');
}

const commitFields = fc.record({
  keyType: fc.constantFrom(0 as const, 1 as const),
  valueVersion: fc.integer({ min: 0, max: MAX_OFFSET_COMMIT_VALUE_VERSION }),
  group: fc.string({ unit: 'grapheme' }),
  topic: fc.string({ unit: 'grapheme', minLength: 1 }),
  partition: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  offset: fc.maxSafeNat(),
  leaderEpoch: fc.integer({ min: -1, max: 2 ** 31 - 1 }),
  metadata: fc.string({ unit: 'grapheme' }),
  commitTimestampMs: fc.maxSafeNat(),
  expireTimestampMs: fc.maxSafeNat(),
  topicId: fc.option(fc.uint8Array({ minLength: 16, maxLength: 16 }), { nil: undefined }),
});

describe('offsets topic decoder', () => {
  it('round-trips offset commits of every key type and value version', () => {
    fc.assert(
      fc.property(commitFields, (fields) => {
        const topicId = fields.topicId === undefined ? undefined : Buffer.from(fields.topicId);
        const record = decodeOffsetsTopicRecord(
          encodeOffsetCommitKey(fields),
          encodeOffsetCommitValue({ ...fields, topicId }),
        );
        expect(record).toEqual({
          kind: 'offset-commit',
          keyType: fields.keyType,
          valueVersion: fields.valueVersion,
          group: fields.group,
          topic: fields.topic,
          partition: fields.partition,
          offset: fields.offset,
          leaderEpoch: fields.valueVersion >= 3 ? fields.leaderEpoch : -1,
          metadata: fields.metadata,
          commitTimestampMs: fields.commitTimestampMs,
          expireTimestampMs: fields.valueVersion === 1 ? fields.expireTimestampMs : -1,
          ...(fields.valueVersion >= 4 && topicId !== undefined
            ? { topicId: topicId.toString('base64url') }
            : {}),
        });
      }),
      { numRuns: 1000 },
    );
  });

  it('raises nothing but a typed decode error on arbitrary bytes', () => {
    fc.assert(
      fc.property(
        fc.option(fc.uint8Array({ maxLength: 64 }), { nil: null }),
        fc.option(fc.uint8Array({ maxLength: 64 }), { nil: null }),
        (key, value) => {
          try {
            decodeOffsetsTopicRecord(
              key === null ? null : Buffer.from(key),
              value === null ? null : Buffer.from(value),
            );
          } catch (error: unknown) {
            expect(error).toBeInstanceOf(OffsetSyncError);
            expect([ErrorCodes.DECODE_ERROR, ErrorCodes.UNKNOWN_RECORD]).toContain(
              (error as OffsetSyncError).code,
            );
          }
        },
      ),
      { numRuns: 20_000 },
    );
  });

  it('raises nothing but a typed decode error on valid records with bytes flipped or cut', () => {
    fc.assert(
      fc.property(
        commitFields,
        fc.nat(),
        fc.integer({ min: 0, max: 255 }),
        fc.boolean(),
        (fields, at, byte, cut) => {
          const key = encodeOffsetCommitKey(fields);
          const value = encodeOffsetCommitValue({ ...fields, topicId: undefined });
          const damaged = Buffer.from(value);
          const position = at % damaged.length;
          if (cut) {
            expect(() => decodeOffsetsTopicRecord(key, damaged.subarray(0, position))).toThrow(
              OffsetSyncError,
            );
            return;
          }
          damaged[position] = byte;
          try {
            decodeOffsetsTopicRecord(key, damaged);
          } catch (error: unknown) {
            expect(error).toBeInstanceOf(OffsetSyncError);
          }
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('turns offset tombstones into deletions', () => {
    const key = encodeOffsetCommitKey({ group: 'g', topic: 't', partition: 3 });
    expect(decodeOffsetsTopicRecord(key, null)).toEqual({
      kind: 'offset-deleted',
      keyType: 1,
      group: 'g',
      topic: 't',
      partition: 3,
    });
  });

  it('recognises classic group metadata and its tombstone without decoding the members', () => {
    const key = encodeGroupMetadataKey('orders');
    expect(decodeOffsetsTopicRecord(key, Buffer.from([0, 3, 1, 2, 3]))).toEqual({
      kind: 'group-metadata',
      group: 'orders',
    });
    expect(decodeOffsetsTopicRecord(key, null)).toEqual({
      kind: 'group-deleted',
      recordType: 2,
      group: 'orders',
    });
  });

  it('recognises and skips every newer coordinator record type; a group metadata tombstone deletes the group', () => {
    for (let type = 3; type <= 23; type++) {
      const record = decodeOffsetsTopicRecord(encodeGroupMetadataKey('g', type), Buffer.from([0, 0]));
      expect(record.kind).toBe('coordinator-record');
    }
    expect(decodeOffsetsTopicRecord(encodeGroupMetadataKey('kip848', 3), null)).toEqual({
      kind: 'group-deleted',
      recordType: 3,
      group: 'kip848',
    });
    expect(decodeOffsetsTopicRecord(encodeGroupMetadataKey('streams', 17), null)).toMatchObject({
      kind: 'group-deleted',
    });
  });

  it('reports unknown record types and value versions with the numbers needed to count them', () => {
    const unknownType = decodeError(() =>
      decodeOffsetsTopicRecord(encodeGroupMetadataKey('g', 99), new KafkaWriter().int16(7).build()),
    );
    expect(unknownType.code).toBe(ErrorCodes.UNKNOWN_RECORD);
    expect(unknownType.details).toEqual({ keyType: 99, valueVersion: 7 });

    const key = encodeOffsetCommitKey({ group: 'g', topic: 't', partition: 0 });
    const futureValue = new KafkaWriter().int16(5).int64(10).build();
    const unknownVersion = decodeError(() => decodeOffsetsTopicRecord(key, futureValue));
    expect(unknownVersion.code).toBe(ErrorCodes.UNKNOWN_RECORD);
    expect(unknownVersion.details).toEqual({ keyType: 1, valueVersion: 5 });
  });

  it('refuses trailing bytes after a fixed-layout value instead of guessing', () => {
    const key = encodeOffsetCommitKey({ group: 'g', topic: 't', partition: 0 });
    const value = Buffer.concat([
      encodeOffsetCommitValue({
        group: 'g',
        topic: 't',
        partition: 0,
        offset: 5,
        commitTimestampMs: 1,
        valueVersion: 3,
      }),
      Buffer.from([1]),
    ]);
    const error = decodeError(() => decodeOffsetsTopicRecord(key, value));
    expect(error.code).toBe(ErrorCodes.DECODE_ERROR);
    expect(error.details).toEqual({ keyType: 1 });
  });

  it('skips unknown tagged fields of a flexible value', () => {
    const key = encodeOffsetCommitKey({ group: 'g', topic: 't', partition: 0 });
    const value = new KafkaWriter()
      .int16(4)
      .int64(42)
      .int32(7)
      .compactNullableString('meta')
      .int64(1000)
      .taggedFields([{ tag: 5, value: Buffer.from('future') }])
      .build();
    expect(decodeOffsetsTopicRecord(key, value)).toMatchObject({
      offset: 42,
      leaderEpoch: 7,
      metadata: 'meta',
    });
  });
});
