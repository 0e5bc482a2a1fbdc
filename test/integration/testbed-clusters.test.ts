// The test bed with more than two clusters (what fan-out and mesh topologies run on): three independent
// single-node Kafka clusters, each with its own cluster id, each holding only what was written to it, all
// stopped by stopTestbed.
import { describe, expect, it, onTestFinished } from 'vitest';
import { startTestbed, stopTestbed } from '@offsetsync/testbed';
import { isAlive } from '../infra/processes.js';
import { connectedAdmin, kafkaClient } from '../support/kafka-clients.js';
import { uniqueName } from '../support/names.js';

describe('test bed with three clusters', () => {
  it(
    'starts each named cluster on its own, the first two also as source and target, and stops them all',
    { timeout: 180_000 },
    async () => {
      const bed = await startTestbed({ clusters: ['dc1', 'dc2', 'cloud'] });
      let stopped = false;
      onTestFinished(async () => {
        if (!stopped) await stopTestbed(bed);
      });
      expect(Object.keys(bed.clusters)).toEqual(['dc1', 'dc2', 'cloud']);
      expect([bed.source.name, bed.target.name]).toEqual(['dc1', 'dc2']);
      const clusters = Object.values(bed.clusters);
      expect(new Set(clusters.map((c) => c.clusterId)).size).toBe(3);
      expect(new Set(clusters.map((c) => c.bootstrapServers)).size).toBe(3);

      // A topic made on one cluster exists on that one only.
      const topics = new Map<string, string>();
      for (const cluster of clusters) {
        const admin = await connectedAdmin(kafkaClient(cluster.bootstrapServers));
        const topic = uniqueName(`bed-${cluster.name}`);
        await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
        topics.set(cluster.name, topic);
      }
      for (const cluster of clusters) {
        const admin = await connectedAdmin(kafkaClient(cluster.bootstrapServers));
        const listed = new Set(await admin.listTopics());
        expect([...topics].filter(([, topic]) => listed.has(topic)).map(([name]) => name)).toEqual([
          cluster.name,
        ]);
      }

      const pids = [...clusters.map((c) => c.pid), bed.nats.pid];
      await stopTestbed(bed);
      stopped = true;
      expect(pids.filter(isAlive)).toEqual([]);
    },
  );
});
