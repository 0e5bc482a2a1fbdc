import { describe, expect, it } from 'vitest';
import type { FetchAnswer, FetchRequest } from '@offsetsync/kafka';
import { KafkaRecordSource } from './kafka-record-source.js';

function answer(request: FetchRequest, offsets: number[], nextOffset: number): FetchAnswer {
  return {
    topic: request.topic,
    partition: request.partition,
    requestedOffset: request.offset,
    records: offsets.map((offset) => ({
      offset,
      timestampMs: 1_000 + offset,
      timestampType: 'create-time',
      key: Buffer.from(`k${offset}`),
      value: null,
      headers: {},
    })),
    nextOffset,
    highWatermark: 100,
    lastStableOffset: 100,
    logStartOffset: 0,
  };
}

describe('KafkaRecordSource', () => {
  it('hands the search the records up to the first at or after `until`, and all of them without it', async () => {
    const source = new KafkaRecordSource({
      partitionBounds: () => Promise.reject(new Error('not used')),
      fetchRecords: (requests) => Promise.resolve(requests.map((r) => answer(r, [4, 5, 7, 8, 9], 10))),
    });
    const [bounded, unbounded] = await source.records([
      { topic: 't', partition: 0, offset: 4, until: 6 },
      { topic: 't', partition: 0, offset: 4 },
    ]);
    expect((bounded as { offset: number }[]).map((r) => r.offset)).toEqual([4, 5, 7]);
    expect((unbounded as { offset: number }[]).map((r) => r.offset)).toEqual([4, 5, 7, 8, 9]);
    expect((bounded as { keySize: number }[])[0]?.keySize).toBe(2);
  });

  it('reads on past a stretch of markers, keeping `until`', async () => {
    const asked: FetchRequest[] = [];
    const source = new KafkaRecordSource({
      partitionBounds: () => Promise.reject(new Error('not used')),
      fetchRecords: (requests) => {
        asked.push(...requests);
        return Promise.resolve(
          requests.map((r) => (r.offset < 20 ? answer(r, [], 20) : answer(r, [20, 21, 22], 23))),
        );
      },
    });
    const [records] = await source.records([{ topic: 't', partition: 0, offset: 10, until: 21 }]);
    expect(asked.map((r) => r.offset)).toEqual([10, 20]);
    expect((records as { offset: number }[]).map((r) => r.offset)).toEqual([20, 21]);
  });
});
