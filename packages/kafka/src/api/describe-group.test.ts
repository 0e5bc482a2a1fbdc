// describeGroup and listGroups against the fake broker: which requests each kind of group costs, what
// comes back, and how a broker without the KIP-848 APIs is answered.
import { describe, expect, it, onTestFinished } from 'vitest';
import { createLogger } from '@offsetsync/runtime';
import { KafkaAdapter } from '../kafka-adapter.js';
import { adapterOnFakeCluster } from '../testing/adapter-on-fake.js';
import { FakeKafkaCluster } from '../testing/fake-broker.js';

const requestsOf = (cluster: FakeKafkaCluster, mark: number) =>
  cluster.since(mark).filter((r) => !r.startsWith('FindCoordinator'));

describe('describeGroup against a fake broker', () => {
  it('describes a consumer-protocol group with one ConsumerGroupDescribe: members, client ids, hosts, assignment', async () => {
    const { cluster, adapter } = await adapterOnFakeCluster();
    cluster.setGroup('app', {
      type: 'consumer',
      members: [
        {
          memberId: 'm-1',
          clientId: 'console-consumer',
          clientHost: '/10.0.0.7',
          assignment: [
            { topic: 'b', partitions: [1, 0] },
            { topic: 'a', partitions: [2] },
          ],
        },
        { memberId: 'm-2', clientId: 'other', clientHost: '/10.0.0.8' },
      ],
    });
    const mark = cluster.requests.length;
    expect(await adapter.describeGroup('app')).toEqual({
      groupType: 'consumer',
      state: 'Stable',
      protocolType: 'consumer',
      memberCount: 2,
      members: [
        {
          memberId: 'm-1',
          instanceId: null,
          clientId: 'console-consumer',
          clientHost: '/10.0.0.7',
          assignment: [
            { topic: 'a', partition: 2 },
            { topic: 'b', partition: 0 },
            { topic: 'b', partition: 1 },
          ],
        },
        { memberId: 'm-2', instanceId: null, clientId: 'other', clientHost: '/10.0.0.8', assignment: [] },
      ],
    });
    expect(requestsOf(cluster, mark)).toEqual(['ConsumerGroupDescribe@0:0']);
  });

  it('reports an empty consumer-protocol group as Empty with no members', async () => {
    const { cluster, adapter } = await adapterOnFakeCluster();
    cluster.setGroup('stopped', { type: 'consumer', members: [] });
    expect(await adapter.describeGroup('stopped')).toEqual({
      groupType: 'consumer',
      state: 'Empty',
      protocolType: 'consumer',
      memberCount: 0,
      members: [],
    });
  });

  it('describes a classic group with DescribeGroups once ConsumerGroupDescribe does not know it', async () => {
    const { cluster, adapter } = await adapterOnFakeCluster();
    cluster.setGroup('legacy', {
      type: 'classic',
      members: [{ memberId: 'k-1', clientId: 'kafkajs', clientHost: '/10.0.0.9' }],
    });
    const mark = cluster.requests.length;
    expect(await adapter.describeGroup('legacy')).toEqual({
      groupType: 'classic',
      state: 'Stable',
      protocolType: 'consumer',
      memberCount: 1,
      members: [{ memberId: 'k-1', instanceId: null, clientId: 'kafkajs', clientHost: '/10.0.0.9' }],
    });
    expect(requestsOf(cluster, mark)).toEqual(['ConsumerGroupDescribe@0:69', 'DescribeGroups@0:0']);
  });

  it('reports a group no API knows as Dead, of type none, after asking ListGroups', async () => {
    const { cluster, adapter } = await adapterOnFakeCluster();
    const mark = cluster.requests.length;
    expect(await adapter.describeGroup('nobody')).toEqual({
      groupType: 'none',
      state: 'Dead',
      protocolType: '',
      memberCount: 0,
      members: [],
    });
    expect(requestsOf(cluster, mark)).toEqual([
      'ConsumerGroupDescribe@0:69',
      'DescribeGroups@0:0',
      'ListGroups@0:0',
    ]);
  });

  it('refuses to call a group of another type (share) free: GROUP_TYPE_UNSUPPORTED', async () => {
    const { cluster, adapter } = await adapterOnFakeCluster();
    cluster.setGroup('shared', {
      type: 'share',
      members: [{ memberId: 's-1', clientId: 'share', clientHost: '/10.0.0.1' }],
    });
    await expect(adapter.describeGroup('shared')).rejects.toMatchObject({
      code: 'GROUP_TYPE_UNSUPPORTED',
      retryable: false,
      details: { groupId: 'shared', groupType: 'share', state: 'Stable' },
    });
  });

  it('follows a coordinator move seen by ConsumerGroupDescribe', async () => {
    const { cluster, adapter } = await adapterOnFakeCluster();
    cluster.setGroup('moving', {
      type: 'consumer',
      members: [{ memberId: 'm', clientId: 'c', clientHost: 'h' }],
    });
    expect(await adapter.describeGroup('moving')).toMatchObject({ memberCount: 1 });
    cluster.moveCoordinator('moving', 1);
    const mark = cluster.requests.length;
    expect(await adapter.describeGroup('moving')).toMatchObject({ groupType: 'consumer', memberCount: 1 });
    expect(requestsOf(cluster, mark)).toEqual(['ConsumerGroupDescribe@0:16', 'ConsumerGroupDescribe@1:0']);
  });

  it('rejects with the broker error when ConsumerGroupDescribe fails for another reason', async () => {
    const { cluster, adapter } = await adapterOnFakeCluster();
    cluster.inject({ api: 'ConsumerGroupDescribe', error: 30 });
    await expect(adapter.describeGroup('forbidden')).rejects.toMatchObject({
      code: 'NOT_AUTHORIZED',
      details: {
        brokerError: 'GROUP_AUTHORIZATION_FAILED',
        brokerCode: 30,
        groupId: 'forbidden',
        missingAcl: 'ALLOW DESCRIBE on GROUP:forbidden (READ, WRITE, DELETE or ALTER imply it)',
      },
    });
  });

  it('asks only DescribeGroups of a broker without the KIP-848 APIs (there are no other group types)', async () => {
    const cluster = await FakeKafkaCluster.start({ brokers: 1, kip848: false });
    onTestFinished(() => cluster.close());
    const adapter = new KafkaAdapter({
      cluster: {
        bootstrapServers: cluster.bootstrapServers,
        connectionTimeoutMs: 1_000,
        requestTimeoutMs: 2_000,
      },
      clientId: 'fake-broker-test',
      logger: createLogger({ service: 'test', instanceId: 'test', level: 'silent' }),
    });
    onTestFinished(() => adapter.disconnect());
    await adapter.connect();
    cluster.setGroup('old', { type: 'classic', members: [] });
    const mark = cluster.requests.length;
    expect(await adapter.describeGroup('old')).toEqual({
      groupType: 'classic',
      state: 'Empty',
      protocolType: '',
      memberCount: 0,
      members: [],
    });
    expect(await adapter.describeGroup('gone')).toMatchObject({ groupType: 'none', state: 'Dead' });
    expect(requestsOf(cluster, mark)).toEqual(['DescribeGroups@0:0', 'DescribeGroups@0:0']);
    await expect(adapter.listGroups({ types: ['consumer'] })).rejects.toMatchObject({
      code: 'KAFKA_UNSUPPORTED',
      retryable: false,
    });
    expect(cluster.problems).toEqual([]);
  });
});

describe('listGroups against a fake broker', () => {
  it('asks every broker, which applies the type and state filters, and merges the answers by group id', async () => {
    const { cluster, adapter } = await adapterOnFakeCluster();
    cluster.setGroup('c-stable', {
      type: 'consumer',
      members: [{ memberId: 'm', clientId: 'c', clientHost: 'h' }],
    });
    cluster.setGroup('c-empty', { type: 'consumer', members: [] });
    cluster.setGroup('a-classic', { type: 'classic', members: [] });
    cluster.moveCoordinator('c-empty', 1);
    cluster.moveCoordinator('a-classic', 1);

    const mark = cluster.requests.length;
    expect(await adapter.listGroups({ types: ['consumer'] })).toEqual([
      { groupId: 'c-empty', groupType: 'consumer', state: 'Empty', protocolType: 'consumer' },
      { groupId: 'c-stable', groupType: 'consumer', state: 'Stable', protocolType: 'consumer' },
    ]);
    expect(cluster.since(mark).sort()).toEqual(['ListGroups@0:0', 'ListGroups@1:0']);
    expect((await adapter.listGroups({ states: ['empty'] })).map((g) => g.groupId)).toEqual([
      'a-classic',
      'c-empty',
    ]);
    expect((await adapter.listGroups()).map((g) => `${g.groupId}:${g.groupType}`)).toEqual([
      'a-classic:classic',
      'c-empty:consumer',
      'c-stable:consumer',
    ]);
  });

  it('rejects with the broker error of a broker that cannot list', async () => {
    const { cluster, adapter } = await adapterOnFakeCluster();
    cluster.inject({ api: 'ListGroups', nodeId: 1, error: 14 });
    await expect(adapter.listGroups()).rejects.toMatchObject({
      code: 'KAFKA_BROKER_ERROR',
      retryable: true,
      details: { brokerError: 'GROUP_LOAD_IN_PROGRESS', brokerCode: 14, nodeId: '1' },
    });
  });
});
