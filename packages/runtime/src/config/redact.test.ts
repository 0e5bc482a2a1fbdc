import { describe, expect, it } from 'vitest';
import { loadConfig } from './load-config.js';
import { redactConfig, REDACTED } from './redact.js';

describe('redactConfig', () => {
  const config = loadConfig({
    env: {},
    overrides: {
      clusters: {
        src: {
          bootstrapServers: ['h:1'],
          sasl: { mechanism: 'plain', username: 'alice', password: 'hunter2' },
        },
        dst: { bootstrapServers: ['h:2'] },
      },
      nats: { user: 'bob', password: 'pa55', servers: ['nats://bob:s3cret@n1:4222', 'tls://t0ken@n2:4222'] },
    },
  });

  it('replaces every secret and keeps everything else', () => {
    const redacted = redactConfig(config);
    expect(redacted.clusters.src?.sasl).toEqual({
      mechanism: 'plain',
      username: 'alice',
      password: REDACTED,
    });
    expect(redacted.nats.password).toBe(REDACTED);
    expect(redacted.nats.user).toBe('bob');
    expect(redacted.clusters.dst).toEqual(config.clusters.dst);
    expect(JSON.stringify(redacted)).not.toMatch(/hunter2|pa55|s3cret|t0ken/);
  });

  it('removes credentials written into server URLs and keeps the rest of the URL', () => {
    expect(redactConfig(config).nats.servers).toEqual(['nats://***@n1:4222', 'tls://***@n2:4222']);
  });

  it('replaces a token', () => {
    const redacted = redactConfig(loadConfig({ env: {}, overrides: { nats: { token: 't0ken' } } }));
    expect(redacted.nats.token).toBe(REDACTED);
  });

  it('does not modify its input', () => {
    redactConfig(config);
    expect(config.clusters.src?.sasl?.password).toBe('hunter2');
    expect(redactConfig(config)).not.toBe(config);
  });

  it('leaves absent secrets absent', () => {
    const redacted = redactConfig(loadConfig({ env: {} }));
    expect(redacted.nats.password).toBeUndefined();
    expect('token' in redacted.nats).toBe(false);
  });
});
