// Leader routing and its retries against a fake broker speaking Kafka's wire protocol over TCP.
import { describe, expect, it } from 'vitest';
import { adapterOnFakeCluster } from '../testing/adapter-on-fake.js';

describe('leader routing against a fake broker', () => {
  it('follows a leader move: reads metadata again and sends the request to the new leader', async () => {
    const { cluster, adapter } = await adapterOnFakeCluster();
    cluster.createTopic('moving', { leader: 0, highWatermark: 42 });
    // The first answer caches leader 0.
    expect(await adapter.listOffsets([{ topic: 'moving', partition: 0, timestamp: 'latest' }])).toEqual([
      { topic: 'moving', partition: 0, offset: 42, timestamp: -1 },
    ]);

    cluster.moveLeader('moving', 0, 1);
    const mark = cluster.requests.length;
    expect(await adapter.listOffsets([{ topic: 'moving', partition: 0, timestamp: 'latest' }])).toEqual([
      { topic: 'moving', partition: 0, offset: 42, timestamp: -1 },
    ]);
    expect(cluster.since(mark)).toEqual(['ListOffsets@0:6', 'Metadata@0:0', 'ListOffsets@1:0']);

    // The new leader is cached: the next request goes there directly.
    const [fetched] = await adapter.fetchRecords([{ topic: 'moving', partition: 0, offset: 42 }]);
    expect(fetched).toMatchObject({ records: [], highWatermark: 42 });
    expect(fetched?.error).toBeUndefined();
    expect(cluster.since(mark).slice(3)).toEqual(['Fetch@1:0']);
  });

  it.each([
    ['listOffsets', 'ListOffsets'],
    ['fetchRecords', 'Fetch'],
  ] as const)('%s reconnects and retries when the leader drops the connection', async (call, api) => {
    const { cluster, adapter } = await adapterOnFakeCluster();
    cluster.createTopic('dropped', { leader: 0, highWatermark: 7 });
    const ask = async () => {
      const [answer] =
        call === 'listOffsets'
          ? await adapter.listOffsets([{ topic: 'dropped', partition: 0, timestamp: 'latest' }])
          : await adapter.fetchRecords([{ topic: 'dropped', partition: 0, offset: 7 }]);
      return answer;
    };
    expect((await ask())?.error).toBeUndefined();

    cluster.inject({ api, nodeId: 0, error: 'drop' });
    const connections = cluster.connections(0);
    const mark = cluster.requests.length;
    const answer = await ask();
    expect(answer?.error).toBeUndefined();
    expect(answer).toMatchObject({ topic: 'dropped', partition: 0 });
    // Dropped, metadata read again, sent again to the same leader over a new connection. The metadata may
    // take a second broker: kafkajs' handler of the old socket's close also rejects what the reconnected
    // socket has in flight when the close arrives after the reconnect (the Fetch connection's drop makes
    // the adapter close the broker's other, healthy connection too).
    const seen = cluster.since(mark);
    expect(seen[0]).toBe(`${api}@0:drop`);
    expect(seen.slice(1, -1).length).toBeGreaterThan(0);
    expect(seen.slice(1, -1).every((r) => r.startsWith('Metadata@'))).toBe(true);
    expect(seen.at(-1)).toBe(`${api}@0:0`);
    expect(cluster.connections(0)).toBeGreaterThan(connections);
  });

  it('stops after one retry with a retryable error while the leader keeps refusing', async () => {
    const { cluster, adapter } = await adapterOnFakeCluster();
    cluster.createTopic('stuck', { leader: 0 });
    cluster.createTopic('fine', { leader: 1, highWatermark: 3 });
    cluster.inject({ api: 'ListOffsets', nodeId: 0, error: 6, times: Infinity });

    const mark = cluster.requests.length;
    const answers = await adapter.listOffsets([
      { topic: 'stuck', partition: 0, timestamp: 'latest' },
      { topic: 'fine', partition: 0, timestamp: 'latest' },
    ]);
    expect(answers[0]).toMatchObject({ offset: -1, timestamp: -1 });
    expect(answers[0]?.error).toMatchObject({
      code: 'KAFKA_BROKER_ERROR',
      retryable: true,
      details: { brokerCode: 6, topic: 'stuck', partition: 0 },
    });
    // One partition's refusal costs the others nothing.
    expect(answers[1]).toEqual({ topic: 'fine', partition: 0, offset: 3, timestamp: -1 });
    expect(cluster.since(mark).filter((r) => r.startsWith('ListOffsets@0'))).toEqual([
      'ListOffsets@0:6',
      'ListOffsets@0:6',
    ]);
  });

  it('stops after one retry with KAFKA_UNREACHABLE (retryable) while the leader keeps dropping connections', async () => {
    const { cluster, adapter } = await adapterOnFakeCluster();
    cluster.createTopic('gone', { leader: 0 });
    cluster.inject({ api: 'ListOffsets', nodeId: 0, error: 'drop', times: Infinity });

    const mark = cluster.requests.length;
    const [answer] = await adapter.listOffsets([{ topic: 'gone', partition: 0, timestamp: 'latest' }]);
    expect(answer?.error).toMatchObject({
      code: 'KAFKA_UNREACHABLE',
      retryable: true,
      details: { topic: 'gone', partition: 0, nodeId: 0 },
    });
    expect(cluster.since(mark).filter((r) => r.startsWith('ListOffsets'))).toEqual([
      'ListOffsets@0:drop',
      'ListOffsets@0:drop',
    ]);
  });
});
