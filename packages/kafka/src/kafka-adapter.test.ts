import { describe, expect, it } from 'vitest';
import type { KafkaClusterConfig } from '@offsetsync/runtime';
import { createLogger } from '@offsetsync/runtime';
import { KafkaAdapter } from './kafka-adapter.js';

const silent = createLogger({ service: 'test', instanceId: 'test', level: 'silent' });

function clusterConfig(overrides: Partial<KafkaClusterConfig> = {}): KafkaClusterConfig {
  return {
    bootstrapServers: ['127.0.0.1:1'],
    connectionTimeoutMs: 1_000,
    requestTimeoutMs: 2_000,
    ...overrides,
  };
}

describe('KafkaAdapter lifecycle', () => {
  it('does not connect when constructed, and rejects every call after disconnect', async () => {
    const adapter = new KafkaAdapter({ cluster: clusterConfig(), clientId: 'test', logger: silent });
    const first = adapter.disconnect();
    expect(adapter.disconnect()).toBe(first);
    await first;
    await expect(adapter.connect()).rejects.toMatchObject({ code: 'LIFECYCLE' });
    await expect(
      adapter.listOffsets([{ topic: 't', partition: 0, timestamp: 'latest' }]),
    ).rejects.toMatchObject({
      code: 'LIFECYCLE',
    });
  });
});
