import { describe, expect, it } from 'vitest';
import { describeConfigSchema } from './describe-config.js';

describe('describeConfigSchema', () => {
  const rows = describeConfigSchema();
  const row = (path: string) => rows.find((r) => r.path === path);

  it('describes every leaf with a description', () => {
    expect(rows.length).toBeGreaterThan(50);
    for (const r of rows) expect(r.description, r.path).not.toBe('');
    expect(new Set(rows.map((r) => r.path)).size).toBe(rows.length);
  });

  it('shows types, defaults and environment names', () => {
    expect(row('collector.fetchMaxWaitMs')).toMatchObject({
      type: 'duration',
      default: '100ms',
      required: false,
      env: 'OFFSETSYNC_COLLECTOR__FETCH_MAX_WAIT_MS',
    });
    expect(row('nats.streamReplicas')).toMatchObject({ type: '1 | 3', default: '1' });
    expect(row('instance.id')).toMatchObject({ default: '<hostname>-<pid>' });
    expect(row('collector.consumerGroup')).toMatchObject({ default: 'offsetsync-collector-<cluster>' });
    expect(row('clusters.<alias>.bootstrapServers')).toMatchObject({ type: 'string[]', required: true });
    expect(row('links')).toMatchObject({ type: 'object[]', env: 'OFFSETSYNC_LINKS' });
    expect(row('links[].source')).toMatchObject({ required: true, env: undefined });
  });

  it('marks secrets', () => {
    expect(rows.filter((r) => r.secret).map((r) => r.path)).toEqual([
      'clusters.<alias>.sasl.password',
      'nats.password',
      'nats.token',
    ]);
  });
});
