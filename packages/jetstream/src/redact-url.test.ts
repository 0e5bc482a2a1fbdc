import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redactUrlCredentials } from './redact-url.js';

describe('redactUrlCredentials', () => {
  it('hides a user and password or a token written into a URL', () => {
    expect(redactUrlCredentials('nats://svc:hunter2@nats-0:4222')).toBe('nats://***@nats-0:4222');
    expect(redactUrlCredentials('tls://s3cr3t-token@10.0.0.1:4222')).toBe('tls://***@10.0.0.1:4222');
  });

  it('leaves URLs without credentials and plain host:port unchanged', () => {
    fc.assert(
      fc.property(fc.domain(), fc.integer({ min: 1, max: 65535 }), (host, port) => {
        expect(redactUrlCredentials(`nats://${host}:${port}`)).toBe(`nats://${host}:${port}`);
        expect(redactUrlCredentials(`${host}:${port}`)).toBe(`${host}:${port}`);
      }),
    );
  });

  it('never lets the password through, whatever it holds', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[^/@\s]{1,20}$/), (secret) => {
        expect(redactUrlCredentials(`nats://user:${secret}@h:4222`)).toBe('nats://***@h:4222');
      }),
    );
  });
});
