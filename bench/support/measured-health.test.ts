import { describe, expect, it } from 'vitest';
import { OffsetSyncConfigSchema } from '@offsetsync/runtime';
import { exitReason, healthConfig, type HealthSetup } from './measured-health.js';

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

describe('exitReason', () => {
  it('gives the error Node.js printed last, passing over GC trace lines', () => {
    const log = [
      '{"level":"info","msg":"JetStream streams provisioned"}',
      '/work/main/node_modules/nats/lib/nats-base-client/core.js:143',
      '        return new NatsError(m, code, chainedError);',
      'NatsError: TIMEOUT',
      '    at NatsError.errorForCode (/work/main/node_modules/nats/lib/nats-base-client/core.js:143:16)',
      "  code: 'TIMEOUT',",
      '  chainedError: undefined',
      '}',
      '[27188:0x2d875e10]     1079 ms: Mark-Compact 44.9 (65.7) -> 30.0 (69.8) MB, 13.03 / 0.15 ms',
      'Node.js v20.20.2',
    ].join('\n');
    expect(exitReason(log)).toBe('NatsError: TIMEOUT');
  });

  it("gives the service's last error line with its cause", () => {
    const log = [
      '{"level":"info","msg":"starting"}',
      '{"level":"error","msg":"start failed","err":{"message":"no streams"}}',
      '{"level":"info","msg":"stopped"}',
    ].join('\n');
    expect(exitReason(log)).toBe('start failed: no streams');
  });

  it('says so when the log holds no error', () => {
    expect(exitReason('{"level":"info","msg":"starting"}\n')).toBe('no error in its log');
  });
});
