import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import kafkajs from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@offsetsync/contracts';
import type { KafkaClusterConfig } from '@offsetsync/runtime';
import { createLogger } from '@offsetsync/runtime';
import { kafkajsClientConfig } from './client-config.js';

const { logLevel } = kafkajs;
const silent = createLogger({ service: 'test', instanceId: 'test', level: 'silent' });

function clusterConfig(overrides: Partial<KafkaClusterConfig> = {}): KafkaClusterConfig {
  return {
    bootstrapServers: ['127.0.0.1:1'],
    connectionTimeoutMs: 1_000,
    requestTimeoutMs: 2_000,
    ...overrides,
  };
}

describe('kafkajsClientConfig', () => {
  it('passes bootstrap servers, client id and timeouts', () => {
    const config = kafkajsClientConfig(
      clusterConfig({
        bootstrapServers: ['a:9092', 'b:9092'],
        connectionTimeoutMs: 1234,
        requestTimeoutMs: 5678,
      }),
      'client-1',
      silent,
    );
    expect(config).toMatchObject({
      clientId: 'client-1',
      brokers: ['a:9092', 'b:9092'],
      connectionTimeout: 1234,
      requestTimeout: 5678,
      logLevel: logLevel.WARN,
    });
    expect(config.ssl).toBeUndefined();
    expect(config.sasl).toBeUndefined();
  });

  it('reads the TLS files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'offsetsync-tls-'));
    for (const name of ['ca.pem', 'cert.pem', 'key.pem']) writeFileSync(join(dir, name), `-- ${name} --`);
    const config = kafkajsClientConfig(
      clusterConfig({
        tls: {
          enabled: true,
          caFile: join(dir, 'ca.pem'),
          certFile: join(dir, 'cert.pem'),
          keyFile: join(dir, 'key.pem'),
          rejectUnauthorized: false,
        },
      }),
      'c',
      silent,
    );
    expect(config.ssl).toEqual({
      rejectUnauthorized: false,
      ca: [Buffer.from('-- ca.pem --')],
      cert: Buffer.from('-- cert.pem --'),
      key: Buffer.from('-- key.pem --'),
    });
  });

  it('uses the system trust store when TLS is on without files, and plain TCP when it is off', () => {
    expect(
      kafkajsClientConfig(clusterConfig({ tls: { enabled: true, rejectUnauthorized: true } }), 'c', silent)
        .ssl,
    ).toEqual({ rejectUnauthorized: true });
    expect(
      kafkajsClientConfig(clusterConfig({ tls: { enabled: false, rejectUnauthorized: true } }), 'c', silent)
        .ssl,
    ).toBeUndefined();
  });

  it('reports every unreadable TLS file at once', () => {
    const tls = {
      enabled: true,
      caFile: '/nonexistent/ca.pem',
      keyFile: '/nonexistent/key.pem',
      rejectUnauthorized: true,
    };
    let thrown: unknown;
    try {
      kafkajsClientConfig(clusterConfig({ tls }), 'c', silent);
    } catch (e: unknown) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).problems.map((p) => p.path)).toEqual(['tls.caFile', 'tls.keyFile']);
  });

  it.each(['plain', 'scram-sha-256', 'scram-sha-512'] as const)('passes SASL %s', (mechanism) => {
    const config = kafkajsClientConfig(
      clusterConfig({ sasl: { mechanism, username: 'u', password: 'p' } }),
      'c',
      silent,
    );
    expect(config.sasl).toEqual({ mechanism, username: 'u', password: 'p' });
  });

  it('routes kafkajs errors and warnings to the logger', () => {
    const lines: Record<string, unknown>[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const logger = createLogger({ service: 'test', instanceId: 'i', level: 'info', destination });
    const { logCreator } = kafkajsClientConfig(clusterConfig(), 'c', logger);
    const log = logCreator?.(logLevel.WARN);
    const timestamp = new Date().toISOString();
    log?.({
      namespace: 'Connection',
      level: logLevel.ERROR,
      label: 'ERROR',
      log: { timestamp, logger: 'kafkajs', message: 'Response Metadata failed', broker: 'b:1' },
    });
    log?.({
      namespace: 'Cluster',
      level: logLevel.WARN,
      label: 'WARN',
      log: { timestamp, logger: 'kafkajs', message: 'slow' },
    });
    expect(lines).toMatchObject([
      {
        level: 'error',
        msg: 'Response Metadata failed',
        component: 'kafkajs',
        namespace: 'Connection',
        broker: 'b:1',
      },
      { level: 'warn', msg: 'slow', component: 'kafkajs', namespace: 'Cluster' },
    ]);
  });
});
