// Every socket the adapter opens is closed by disconnect(), counted on the fake brokers' side: concurrent
// calls must not leave a second socket for the same broker connection behind, and a call racing with
// disconnect must fail with LIFECYCLE instead of opening a new socket.
import { describe, expect, it, onTestFinished } from 'vitest';
import { createLogger } from '@offsetsync/runtime';
import { KafkaAdapter } from '../kafka-adapter.js';
import { adapterOnFakeCluster } from '../testing/adapter-on-fake.js';
import { FakeKafkaCluster } from '../testing/fake-broker.js';
import type { FetchRequest } from '../types.js';

const silent = createLogger({ service: 'test', instanceId: 'test', level: 'silent' });

/** Waits until the fake brokers hold no connection open, or fails with how many are left. */
async function noConnectionsLeft(cluster: FakeKafkaCluster, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (cluster.openConnections() > 0) {
    if (Date.now() > deadline) {
      throw new Error(
        `${cluster.openConnections()} connection(s) still open ${timeoutMs} ms after disconnect`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A fake cluster with a partition led by each broker, and fetches of both. */
async function clusterWithTwoLeaders(): Promise<{ cluster: FakeKafkaCluster; reads: FetchRequest[] }> {
  const cluster = await FakeKafkaCluster.start({ brokers: 2 });
  onTestFinished(() => cluster.close());
  cluster.createTopic('on-0', { leader: 0, highWatermark: 5 });
  cluster.createTopic('on-1', { leader: 1, highWatermark: 5 });
  const reads = [
    { topic: 'on-0', partition: 0, offset: 5 },
    { topic: 'on-1', partition: 0, offset: 5 },
  ];
  return { cluster, reads };
}

/** An adapter on `cluster` that has not connected yet; disconnected when the test finishes. */
function unconnectedAdapter(cluster: FakeKafkaCluster): KafkaAdapter {
  const adapter = new KafkaAdapter({
    cluster: {
      bootstrapServers: cluster.bootstrapServers,
      connectionTimeoutMs: 1_000,
      requestTimeoutMs: 2_000,
    },
    clientId: 'socket-ledger-test',
    logger: silent,
  });
  onTestFinished(() => adapter.disconnect());
  return adapter;
}

describe('the sockets of an adapter', () => {
  it('are all closed by disconnect after concurrent fetchRecords on a connected adapter (regression: two concurrent first Fetches to a broker each opened a socket, kafkajs remembered one, the other stayed open and the process never exited)', async () => {
    const { cluster, adapter } = await adapterOnFakeCluster();
    cluster.createTopic('on-0', { leader: 0, highWatermark: 5 });
    cluster.createTopic('on-1', { leader: 1, highWatermark: 5 });
    const reads = [
      { topic: 'on-0', partition: 0, offset: 5 },
      { topic: 'on-1', partition: 0, offset: 5 },
    ];

    const answers = await Promise.all([adapter.fetchRecords(reads), adapter.fetchRecords(reads)]);
    for (const answer of answers.flat()) expect(answer.error).toBeUndefined();
    // kafkajs keeps two connections per broker (requests, fetches); one socket each, no spare.
    expect([cluster.connections(0), cluster.connections(1)]).toEqual([2, 2]);

    await adapter.disconnect();
    await noConnectionsLeft(cluster);
  });

  it('are all closed by disconnect after concurrent fetchRecords on an adapter not connected yet', async () => {
    const { cluster, reads } = await clusterWithTwoLeaders();
    const adapter = unconnectedAdapter(cluster);

    await Promise.all([
      adapter.fetchRecords(reads),
      adapter.fetchRecords(reads),
      adapter.fetchRecords(reads),
    ]);
    expect([cluster.connections(0), cluster.connections(1)]).toEqual([2, 2]);

    await adapter.disconnect();
    await noConnectionsLeft(cluster);
  });

  it('are not opened by a call racing with disconnect: it rejects with LIFECYCLE', async () => {
    const { cluster, adapter } = await adapterOnFakeCluster();
    cluster.createTopic('on-1', { leader: 1, highWatermark: 5 });
    const accepted = cluster.connections(0) + cluster.connections(1);

    const racing = adapter.fetchRecords([{ topic: 'on-1', partition: 0, offset: 5 }]);
    const disconnected = adapter.disconnect();
    await expect(racing).rejects.toMatchObject({ code: 'LIFECYCLE' });
    await disconnected;

    expect(cluster.connections(0) + cluster.connections(1)).toBe(accepted);
    await noConnectionsLeft(cluster);
  });

  it('include a connection attempt in flight: disconnect during the first connect closes it, the calls waiting for it reject with LIFECYCLE', async () => {
    const { cluster, reads } = await clusterWithTwoLeaders();
    const adapter = unconnectedAdapter(cluster);

    const racing = [adapter.fetchRecords(reads), adapter.fetchRecords(reads)];
    const disconnected = adapter.disconnect();
    for (const call of racing) await expect(call).rejects.toMatchObject({ code: 'LIFECYCLE' });
    await disconnected;

    await noConnectionsLeft(cluster);
    // Nothing connects afterwards either.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(cluster.openConnections()).toBe(0);
  });

  it('include the socket of a connect in progress: disconnect once the first broker accepted it', async () => {
    const { cluster, reads } = await clusterWithTwoLeaders();
    const adapter = unconnectedAdapter(cluster);

    const racing = [adapter.fetchRecords(reads), adapter.fetchRecords(reads)];
    while (cluster.connections(0) === 0) await new Promise((resolve) => setImmediate(resolve));
    const disconnected = adapter.disconnect();
    for (const call of racing) await expect(call).rejects.toMatchObject({ code: 'LIFECYCLE' });
    await disconnected;

    await noConnectionsLeft(cluster);
    expect(cluster.connections(1)).toBe(0);
  });

  it('are never opened again after disconnect: every call rejects with LIFECYCLE', async () => {
    const { cluster, adapter } = await adapterOnFakeCluster();
    cluster.createTopic('on-0', { leader: 0, highWatermark: 5 });
    await adapter.disconnect();
    await noConnectionsLeft(cluster);
    const accepted = cluster.connections(0) + cluster.connections(1);

    await expect(adapter.fetchRecords([{ topic: 'on-0', partition: 0, offset: 5 }])).rejects.toMatchObject({
      code: 'LIFECYCLE',
    });
    await expect(adapter.describeGroup('g')).rejects.toMatchObject({ code: 'LIFECYCLE' });
    expect(cluster.connections(0) + cluster.connections(1)).toBe(accepted);
  });
});
