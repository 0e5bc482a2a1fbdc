import { describe, expect, it } from 'vitest';
import { KafkaReader, KafkaWriter } from '../binary.js';
import { brokerError } from './broker-errors.js';
import { ConsumerGroupDescribeApi } from './consumer-group-describe.js';
import { decodeFlexibleResponse, encodeFlexibleRequest } from './flexible-api.js';
import { ListGroupsApi } from './list-groups.js';
import { TopicIdentitiesApi } from './topic-identities.js';

/** A ListGroups v`version` response body with one group, after an empty response-header tag section. */
function listGroupsResponse(version: number, extra: Buffer = Buffer.alloc(0)): Buffer {
  const w = new KafkaWriter().taggedFields().int32(0).int16(0);
  w.compactArray(['g'], (id) => {
    w.compactNullableString(id).compactNullableString('consumer');
    if (version >= 4) w.compactNullableString('Stable');
    if (version >= 5) w.compactNullableString('consumer');
    // An unknown tagged field the decoder must skip.
    w.taggedFields([{ tag: 7, value: Buffer.from([1, 2, 3]) }]);
  });
  return Buffer.concat([w.taggedFields().build(), extra]);
}

describe('flexible requests encoded by the adapter', () => {
  it('start with the tagged fields of request header v2 and write each version its own fields', () => {
    const args = { statesFilter: ['Stable'], typesFilter: ['consumer'] };
    const v5 = new KafkaReader(encodeFlexibleRequest(ListGroupsApi, 5, args));
    v5.taggedFields();
    expect(v5.compactArray((r) => r.compactString())).toEqual(['Stable']);
    expect(v5.compactArray((r) => r.compactString())).toEqual(['consumer']);
    v5.taggedFields();
    expect(v5.remaining).toBe(0);
    // v4 has no types filter, v3 neither filter.
    expect(encodeFlexibleRequest(ListGroupsApi, 4, args)).toEqual(
      Buffer.from([0, 2, 7, ...Buffer.from('Stable'), 0]),
    );
    expect(encodeFlexibleRequest(ListGroupsApi, 3, args)).toEqual(Buffer.from([0, 0]));

    const describe = new KafkaReader(
      encodeFlexibleRequest(ConsumerGroupDescribeApi, 0, { groupIds: ['a', 'b'] }),
    );
    describe.taggedFields();
    expect(describe.compactArray((r) => r.compactString())).toEqual(['a', 'b']);
    expect(describe.boolean()).toBe(false);
    describe.taggedFields();
    expect(describe.remaining).toBe(0);
  });

  it('decode each version, skipping unknown tagged fields', () => {
    expect(decodeFlexibleResponse(ListGroupsApi, 5, listGroupsResponse(5)).groups).toEqual([
      { groupId: 'g', protocolType: 'consumer', groupState: 'Stable', groupType: 'consumer' },
    ]);
    expect(decodeFlexibleResponse(ListGroupsApi, 3, listGroupsResponse(3)).groups).toEqual([
      { groupId: 'g', protocolType: 'consumer', groupState: '', groupType: '' },
    ]);
  });

  it('refuse a response with bytes left over or cut short (DECODE_ERROR)', () => {
    expect(() => decodeFlexibleResponse(ListGroupsApi, 5, listGroupsResponse(5, Buffer.from([0])))).toThrow(
      expect.objectContaining({ code: 'DECODE_ERROR' }),
    );
    const whole = listGroupsResponse(5);
    expect(() => decodeFlexibleResponse(ListGroupsApi, 5, whole.subarray(0, whole.length - 2))).toThrow(
      expect.objectContaining({ code: 'DECODE_ERROR' }),
    );
    // A v4 decoder on a v5 body reads the type as the tagged-field section and fails rather than guess.
    expect(() => decodeFlexibleResponse(ListGroupsApi, 4, whole)).toThrow(
      expect.objectContaining({ code: 'DECODE_ERROR' }),
    );
  });
});

/** A Metadata v`version` response body: one broker, one topic with one partition, one missing topic. */
function metadataResponse(version: number): Buffer {
  const id = Buffer.from('00112233445566778899aabbccddeeff', 'hex');
  const w = new KafkaWriter().taggedFields().int32(0);
  w.compactArray([1], (node) =>
    w.int32(node).compactNullableString('b1').int32(9092).compactNullableString(null).taggedFields(),
  );
  w.compactNullableString('cluster').int32(1);
  w.compactArray(
    [
      { error: 0, name: 't', id },
      { error: 3, name: 'gone', id: Buffer.alloc(16) },
    ],
    (topic) => {
      w.int16(topic.error).compactNullableString(topic.name).raw(topic.id).boolean(false);
      w.compactArray(topic.error === 0 ? [0] : [], (p) => {
        w.int16(0).int32(p).int32(1).int32(5);
        for (let list = 0; list < 3; list++) w.compactArray(list < 2 ? [1] : [], (n) => w.int32(n));
        w.taggedFields();
      });
      w.int32(-2147483648).taggedFields();
    },
  );
  if (version <= 10) w.int32(-2147483648);
  return w.taggedFields().build();
}

describe('Metadata v10-v12 for topic ids and leader epochs', () => {
  it('asks by name (the zero id) and reads each topic id and partition leader epoch, v10 with its cluster operations field', () => {
    const request = new KafkaReader(encodeFlexibleRequest(TopicIdentitiesApi, 12, { topics: ['t'] }));
    request.taggedFields();
    expect(
      request.compactArray((r) => {
        const id = r.bytes(16);
        const name = r.compactString();
        r.taggedFields();
        return { id: id.toString('hex'), name };
      }),
    ).toEqual([{ id: '0'.repeat(32), name: 't' }]);
    expect([request.boolean(), request.boolean()]).toEqual([false, false]);
    request.taggedFields();
    expect(request.remaining).toBe(0);
    // v10 has one flag more: include cluster authorized operations.
    expect(encodeFlexibleRequest(TopicIdentitiesApi, 10, { topics: ['t'] }).length).toBe(
      encodeFlexibleRequest(TopicIdentitiesApi, 12, { topics: ['t'] }).length + 1,
    );
    for (const version of [10, 11, 12]) {
      expect(decodeFlexibleResponse(TopicIdentitiesApi, version, metadataResponse(version)).topics).toEqual([
        {
          errorCode: 0,
          name: 't',
          topicId: Buffer.from('00112233445566778899aabbccddeeff', 'hex').toString('base64url'),
          partitions: [{ errorCode: 0, partition: 0, leaderEpoch: 5 }],
        },
        { errorCode: 3, name: 'gone', topicId: 'AAAAAAAAAAAAAAAAAAAAAA', partitions: [] },
      ]);
    }
    expect(() => decodeFlexibleResponse(TopicIdentitiesApi, 11, metadataResponse(10))).toThrow(
      expect.objectContaining({ code: 'DECODE_ERROR' }),
    );
  });
});

describe('brokerError', () => {
  it('keeps the number and name of a KIP-848 code kafkajs does not know', () => {
    expect(brokerError(113, 'commitOffsets', { groupId: 'g' })).toMatchObject({
      code: 'KAFKA_BROKER_ERROR',
      retryable: false,
      details: { groupId: 'g', brokerError: 'STALE_MEMBER_EPOCH', brokerCode: 113 },
    });
    expect(brokerError(250, 'x', {})).toMatchObject({
      details: { brokerError: 'UNKNOWN_ERROR_CODE_250', brokerCode: 250 },
    });
    expect(brokerError(25, 'x', {})).toMatchObject({
      details: { brokerError: 'UNKNOWN_MEMBER_ID', brokerCode: 25 },
    });
  });
});
