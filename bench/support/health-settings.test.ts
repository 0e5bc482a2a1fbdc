import { describe, expect, it } from 'vitest';
import { HEALTH_BENCH_DEFAULTS, healthBenchSettings } from './health-settings.js';

describe('healthBenchSettings', () => {
  it('reads the defaults: 1,000,000 group partitions, five rounds of 20 % churn, the GC traced', () => {
    const settings = healthBenchSettings(HEALTH_BENCH_DEFAULTS);
    expect(settings.groups * settings.partitions).toBe(1_000_000);
    expect(settings).toMatchObject({
      churnRounds: 5,
      churnFraction: 0.2,
      forgetDeletedAfterMs: 30_000,
      gcTrace: true,
    });
  });

  it('takes --no-gc-trace', () => {
    expect(healthBenchSettings({ ...HEALTH_BENCH_DEFAULTS, 'no-gc-trace': true }).gcTrace).toBe(false);
  });

  it('reports every bad option at once', () => {
    expect(() =>
      healthBenchSettings({
        ...HEALTH_BENCH_DEFAULTS,
        groups: '0',
        partitions: '2.5',
        'churn-fraction': '1.5',
        'forget-deleted-after': 'soon',
      }),
    ).toThrow(
      /--groups must be an integer >= 1\n--partitions must be an integer >= 1\n--churn-fraction .*\n--forget-deleted-after/s,
    );
  });
});
