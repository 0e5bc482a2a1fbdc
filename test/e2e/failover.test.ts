// Failover on the plaintext bed: the scenario of test/support/failover-scenario.ts, every client without
// a login, every service on one config.
import { describe, expect, inject, it } from 'vitest';
import { testConfig } from '../support/config.js';
import { runFailover } from '../support/failover-scenario.js';
import { natsConnection } from '../support/jetstream.js';
import { kafkaClient, testAdapter } from '../support/kafka-clients.js';

const testbed = inject('testbed');

describe('failover', () => {
  it('moves a group to the target with 0 records skipped and 0 replayed', async () => {
    const { moves } = await runFailover({
      targets: ['target'],
      kafka: (cluster) => kafkaClient(testbed[cluster].bootstrapServers),
      application: (cluster) => kafkaClient(testbed[cluster].bootstrapServers),
      adapter: (cluster) => testAdapter(testbed[cluster].bootstrapServers),
      replicatorCluster: (cluster) => testbed[cluster],
      serviceConfigs: (sections) => {
        const config = testConfig(testbed, sections);
        return { collector: config, translator: config, committer: config };
      },
      nats: () => natsConnection(testbed.nats.url),
    });
    expect(moves.map(({ target, replayed, skipped }) => ({ target, replayed, skipped }))).toEqual([
      { target: 'target', replayed: 0, skipped: 0 },
    ]);
  });
});
