// A KafkaAdapter connected to a fresh FakeKafkaCluster, both closed when the test finishes.
import { onTestFinished } from 'vitest';
import { createLogger } from '@offsetsync/runtime';
import { KafkaAdapter } from '../kafka-adapter.js';
import { FakeKafkaCluster } from './fake-broker.js';

const silent = createLogger({ service: 'test', instanceId: 'test', level: 'silent' });

/** A started fake cluster of two brokers and a connected adapter on it. */
export async function adapterOnFakeCluster(): Promise<{ cluster: FakeKafkaCluster; adapter: KafkaAdapter }> {
  const cluster = await FakeKafkaCluster.start({ brokers: 2 });
  onTestFinished(() => cluster.close());
  const adapter = new KafkaAdapter({
    cluster: {
      bootstrapServers: cluster.bootstrapServers,
      connectionTimeoutMs: 1_000,
      requestTimeoutMs: 2_000,
    },
    clientId: 'fake-broker-test',
    logger: silent,
  });
  onTestFinished(() => adapter.disconnect());
  // Registered last, so it runs first: whatever the fake could not answer is a failure of the test.
  onTestFinished(() => {
    if (cluster.problems.length > 0)
      throw new Error(`the fake broker failed: ${cluster.problems.join('; ')}`);
  });
  await adapter.connect();
  return { cluster, adapter };
}
