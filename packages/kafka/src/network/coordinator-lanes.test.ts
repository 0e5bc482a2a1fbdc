import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { adapterOnFakeCluster } from '../testing/adapter-on-fake.js';
import { laneOf } from './coordinator-lanes.js';

describe('laneOf', () => {
  it('puts every group on one lane within range, the same one each time', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 64 }), (group, lanes) => {
        const lane = laneOf(group, lanes);
        expect(Number.isInteger(lane) && lane >= 0 && lane < lanes).toBe(true);
        expect(laneOf(group, lanes)).toBe(lane);
      }),
    );
  });

  it('spreads similar group names over the lanes', () => {
    const used = new Set(Array.from({ length: 100 }, (_, i) => laneOf(`group-${i}`, 8)));
    expect(used.size).toBe(8);
  });
});

// Coordinator routing and its retries against a fake broker speaking Kafka's wire protocol over TCP.
describe('coordinator routing against a fake broker', () => {
  it('follows a coordinator move: finds the coordinator again and sends the commit there', async () => {
    const { cluster, adapter } = await adapterOnFakeCluster();
    cluster.createTopic('t', { partitions: 2 });
    // Finds and remembers coordinator 0.
    expect(await adapter.describeGroup('g')).toMatchObject({ state: 'Dead', memberCount: 0 });

    cluster.moveCoordinator('g', 1);
    const mark = cluster.requests.length;
    const answers = await adapter.commitOffsets('g', [
      { topic: 't', partition: 0, offset: 5, metadata: 'm' },
      { topic: 't', partition: 1, offset: 6, metadata: null },
    ]);
    expect(answers).toEqual([
      { topic: 't', partition: 0 },
      { topic: 't', partition: 1 },
    ]);
    expect(cluster.committedOffsets('g')).toEqual({ 't-0': 5, 't-1': 6 });
    const findCoordinator = cluster.since(mark).filter((r) => r.startsWith('FindCoordinator'));
    expect(findCoordinator).toHaveLength(1);
    expect(cluster.since(mark).filter((r) => !r.startsWith('FindCoordinator'))).toEqual([
      'OffsetCommit@0:16',
      'OffsetCommit@1:0',
    ]);

    // The new coordinator is remembered.
    const next = cluster.requests.length;
    expect(await adapter.fetchCommittedOffsets('g')).toEqual([
      { topic: 't', partition: 0, offset: 5, metadata: 'm' },
      { topic: 't', partition: 1, offset: 6, metadata: '' },
    ]);
    expect(cluster.since(next)).toEqual(['OffsetFetch@1:0']);
  });

  it('asks again once the coordinator answers COORDINATOR_LOAD_IN_PROGRESS', async () => {
    const { cluster, adapter } = await adapterOnFakeCluster();
    cluster.createTopic('t');
    expect(
      await adapter.commitOffsets('loading', [{ topic: 't', partition: 0, offset: 1, metadata: null }]),
    ).toEqual([{ topic: 't', partition: 0 }]);

    cluster.inject({ api: 'OffsetFetch', error: 14 });
    const mark = cluster.requests.length;
    expect(await adapter.fetchCommittedOffsets('loading')).toEqual([
      { topic: 't', partition: 0, offset: 1, metadata: '' },
    ]);
    // Any broker answers FindCoordinator (kafkajs asks them in random order).
    const seen = cluster.since(mark).map((r) => r.replace(/^FindCoordinator@\d+/, 'FindCoordinator@any'));
    expect(seen).toEqual(['OffsetFetch@0:14', 'FindCoordinator@any:0', 'OffsetFetch@0:0']);
  });

  it('asks for a coordinator that is not available yet again, with backoff', async () => {
    const { cluster, adapter } = await adapterOnFakeCluster();
    cluster.inject({ api: 'FindCoordinator', error: 15, times: 2 });

    expect(await adapter.describeGroup('not-yet')).toMatchObject({ state: 'Dead', memberCount: 0 });
    const finds = cluster.requests.filter((r) => r.api === 'FindCoordinator');
    expect(finds.map((r) => r.answered)).toEqual([15, 15, 0]);
    // kafkajs' retrier with the adapter's settings: about 100 ms, then about 150-200 ms.
    const gaps = finds.slice(1).map((r, i) => r.at - finds[i]!.at);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(75);
  });

  it('reconnects and retries when the coordinator drops the connection', async () => {
    const { cluster, adapter } = await adapterOnFakeCluster();
    cluster.createTopic('t');
    expect(await adapter.describeGroup('dropped')).toMatchObject({ state: 'Dead' });

    cluster.inject({ api: 'OffsetCommit', nodeId: 0, error: 'drop' });
    const connections = cluster.connections(0);
    const mark = cluster.requests.length;
    expect(
      await adapter.commitOffsets('dropped', [{ topic: 't', partition: 0, offset: 9, metadata: null }]),
    ).toEqual([{ topic: 't', partition: 0 }]);
    expect(cluster.committedOffsets('dropped')).toEqual({ 't-0': 9 });
    const seen = cluster.since(mark);
    expect(seen[0]).toBe('OffsetCommit@0:drop');
    expect(seen.at(-1)).toBe('OffsetCommit@0:0');
    expect(seen.filter((r) => r.startsWith('FindCoordinator'))).toHaveLength(1);
    expect(cluster.connections(0)).toBeGreaterThan(connections);
  });

  it('stops after one retry with a retryable error while the coordinator keeps loading', async () => {
    const { cluster, adapter } = await adapterOnFakeCluster();
    cluster.createTopic('t');
    cluster.inject({ api: 'OffsetFetch', error: 14, times: Infinity });
    cluster.inject({ api: 'OffsetCommit', error: 14, times: Infinity });

    await expect(adapter.fetchCommittedOffsets('busy')).rejects.toMatchObject({
      code: 'KAFKA_BROKER_ERROR',
      retryable: true,
      details: { brokerCode: 14, groupId: 'busy' },
    });
    const [answer] = await adapter.commitOffsets('busy', [
      { topic: 't', partition: 0, offset: 1, metadata: null },
    ]);
    expect(answer?.error).toMatchObject({
      code: 'KAFKA_BROKER_ERROR',
      retryable: true,
      details: { brokerCode: 14, groupId: 'busy', topic: 't', partition: 0 },
    });
    expect(cluster.requests.filter((r) => r.api === 'OffsetFetch')).toHaveLength(2);
    expect(cluster.requests.filter((r) => r.api === 'OffsetCommit')).toHaveLength(2);
  });
});
