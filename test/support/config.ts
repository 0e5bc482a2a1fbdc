import type { TestbedInfo } from '../infra/testbed.js';
import { uniqueName } from './names.js';

/**
 * A service config (in its YAML input form) for the test bed: every cluster of the bed by its name
 * (`source` and `target` on the shared bed), one link from `source` to `target`, a subject prefix of the test's own so its streams are private, quick heartbeats and
 * no Prometheus port.
 */
export interface TestConfig extends Record<string, unknown> {
  nats: {
    servers: string[];
    subjectPrefix: string;
    tls?: { caFile: string };
    user?: string;
    passwordFile?: string;
  };
}

export function testConfig(testbed: TestbedInfo, sections: Record<string, unknown> = {}): TestConfig {
  const prefix = uniqueName('t').replaceAll('-', '_');
  return {
    clusters: Object.fromEntries(
      Object.entries(testbed.clusters).map(([name, cluster]) => [
        name,
        { bootstrapServers: [cluster.bootstrapServers], connectionTimeoutMs: '3s', requestTimeoutMs: '10s' },
      ]),
    ),
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

/** Which bed users a {@link secureTestConfig} logs in as. */
export interface SecureTestConfigUsers {
  /**
   * A Kafka user of the secured bed (or its admin), on both clusters. Unset: TLS without a login, for a
   * service that never connects to Kafka (health).
   */
  kafkaUser?: string;
  /** A NATS user of the secured bed (or its admin). */
  natsUser: string;
}

/**
 * {@link testConfig} for the secured bed: each cluster over TLS (the bed's CA) with a SCRAM-SHA-512 login
 * of `kafkaUser`, NATS over TLS as `natsUser`, both passwords read from the bed's password files the way a
 * deployment reads mounted Secrets.
 */
export function secureTestConfig(
  testbed: TestbedInfo,
  sections: Record<string, unknown>,
  users: SecureTestConfigUsers,
): TestConfig {
  const { security } = testbed;
  if (security === undefined)
    throw new Error('secureTestConfig needs the secured test bed: startTestbed({ secure })');
  const kafkaPasswordFile =
    users.kafkaUser === undefined ? undefined : security.kafkaPasswordFiles[users.kafkaUser];
  if (users.kafkaUser !== undefined && kafkaPasswordFile === undefined)
    throw new Error(`the test bed has no Kafka user ${users.kafkaUser}`);
  const natsPasswordFile = security.natsPasswordFiles[users.natsUser];
  if (natsPasswordFile === undefined) throw new Error(`the test bed has no NATS user ${users.natsUser}`);
  const base = testConfig(testbed, sections);
  const login = {
    tls: { enabled: true, caFile: security.caFile },
    ...(users.kafkaUser === undefined
      ? {}
      : { sasl: { mechanism: 'scram-sha-512', username: users.kafkaUser, passwordFile: kafkaPasswordFile } }),
  };
  const clusters = (base.clusters ?? {}) as Record<string, Record<string, unknown>>;
  return {
    ...base,
    clusters: Object.fromEntries(
      Object.entries(clusters).map(([name, cluster]) => [name, { ...cluster, ...login }]),
    ),
    nats: {
      ...base.nats,
      tls: { caFile: security.caFile },
      user: users.natsUser,
      passwordFile: natsPasswordFile,
    },
  };
}
