import type { TestbedInfo } from '../infra/testbed.js';
import { uniqueName } from './names.js';

/**
 * A service config (in its YAML input form) for the test bed: clusters `source` and `target`, one link
 * between them, a subject prefix of the test's own so its streams are private, quick heartbeats and
 * no Prometheus port.
 */
export interface TestConfig extends Record<string, unknown> {
  nats: { servers: string[]; subjectPrefix: string };
}

export function testConfig(testbed: TestbedInfo, sections: Record<string, unknown> = {}): TestConfig {
  const prefix = uniqueName('t').replaceAll('-', '_');
  return {
    clusters: {
      source: {
        bootstrapServers: [testbed.source.bootstrapServers],
        connectionTimeoutMs: '3s',
        requestTimeoutMs: '10s',
      },
      target: {
        bootstrapServers: [testbed.target.bootstrapServers],
        connectionTimeoutMs: '3s',
        requestTimeoutMs: '10s',
      },
    },
    links: [{ source: 'source', target: 'target' }],
    heartbeat: { intervalMs: '500ms' },
    telemetry: { prometheus: { enabled: false } },
    // Several services of one test run side by side: each probe port is a free one.
    probes: { port: 0 },
    logging: { level: 'info' },
    ...sections,
    nats: { servers: [testbed.nats.url], subjectPrefix: prefix },
  };
}
