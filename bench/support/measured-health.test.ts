import { describe, expect, it } from 'vitest';
import { OffsetSyncConfigSchema } from '@offsetsync/runtime';
import { healthConfig, type HealthSetup } from './measured-health.js';

const setup: HealthSetup = {
  natsUrl: 'nats://127.0.0.1:4222',
  subjectPrefix: 'bench_health_1',
  source: 'source',
  target: 'target',
  grpcPort: 50_123,
  instanceId: 'bench-health',
  heartbeatIntervalMs: 1_000,
};

describe('healthConfig', () => {
  it('is a config the health service accepts, with the link configured', () => {
    const parsed = OffsetSyncConfigSchema.parse(healthConfig(setup));
    expect(parsed.links).toMatchObject([{ source: 'source', target: 'target' }]);
    expect(parsed.health?.grpc).toMatchObject({ host: '127.0.0.1', port: 50_123 });
    expect(parsed.nats.subjectPrefix).toBe('bench_health_1');
  });

  it("keeps health's default forget window unless one is given", () => {
    const defaults = OffsetSyncConfigSchema.parse(healthConfig(setup));
    const given = OffsetSyncConfigSchema.parse(healthConfig({ ...setup, forgetDeletedGroupAfterMs: 30_000 }));
    expect(given.health?.forgetDeletedGroupAfterMs).toBe(30_000);
    expect(defaults.health?.forgetDeletedGroupAfterMs).not.toBe(30_000);
  });
});
