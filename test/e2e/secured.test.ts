// offsetsync on the secured bed, as production runs it: Kafka only over SASL_SSL with SCRAM users and
// enforced ACLs, NATS only over TLS with one user per service holding exactly the permissions
// `offsetsync security nats-config` prints, streams and consumers made beforehand by `offsetsync
// provision` (the only admin step), every service in `nats.provisioning: verify` on its own credentials.
// The ACLs granted are exactly those `requiredKafkaAcls` (and so docs/security.md) names. Besides the
// scenario's own verdict, nothing may have been refused along the way: no permission violation in
// nats-server's log, no AUTH_FAILED or NOT_AUTHORIZED in any service's.
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials } from '@grpc/grpc-js';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { stringify } from 'yaml';
import { LinkState, ServiceRole } from '@offsetsync/contracts';
import { startService, type Role, type ServiceProcess } from '@offsetsync/harness';
import { requiredKafkaAcls, type KafkaRole } from '@offsetsync/kafka';
import { defaultSecureOptions } from '../infra/default-secure-options.js';
import { freePort } from '../infra/free-port.js';
import {
  bedKafkaCredentials,
  createCertificateAuthority,
  issueCertificate,
  startTestbed,
  stopTestbed,
  type TestbedInfo,
  type TestbedSecurityInfo,
} from '../infra/testbed.js';
import { waitFor } from '../infra/wait.js';
import { runCli } from '../support/cli.js';
import { secureTestConfig, type TestConfig } from '../support/config.js';
import { runFailover } from '../support/failover-scenario.js';
import { healthClients } from '../support/health-client.js';
import { grantAcls, type AclSpec } from '../support/kafka-acls.js';
import { bedKafkaClient, testAdapter } from '../support/kafka-clients.js';

/** The subject prefix the bed's NATS users were made for (defaultSecureOptions). */
const PREFIX = 'osync';
/** The collector's consumer group: the default for cluster `source`. */
const COLLECTOR_GROUP = 'offsetsync-collector-source';

/** Each role's NATS user (deploymentNatsUsers for the link source -> target) and Kafka user. */
const USERS: Record<Role | 'provision', { nats: string; kafka?: string }> = {
  collector: { nats: 'collector-source', kafka: 'offsetsync-collector' },
  translator: { nats: 'translator-target', kafka: 'offsetsync-translator' },
  committer: { nats: 'committer-target', kafka: 'offsetsync-committer' },
  // Health never connects to Kafka.
  health: { nats: 'health' },
  provision: { nats: 'provision' },
};

let bed: TestbedInfo;

/** The ACLs of `role` as `requiredKafkaAcls` lists them, for the principal `User:<user>`. */
function aclsOf(role: KafkaRole, user: string, cluster: 'source' | 'target'): AclSpec[] {
  return requiredKafkaAcls(role, { collectorGroup: COLLECTOR_GROUP })
    .filter((acl) => acl.cluster === cluster)
    .map(({ resourceType, resourceName, patternType, operation }) => ({
      principal: `User:${user}`,
      resourceType,
      resourceName,
      patternType,
      operation,
    }));
}

/** What the test's stand-ins need: the replicator copies every topic, the application reads and commits. */
function helperAcls(cluster: 'source' | 'target'): AclSpec[] {
  const topics = { resourceType: 'TOPIC', resourceName: '*', patternType: 'LITERAL' } as const;
  const groups = { resourceType: 'GROUP', resourceName: '*', patternType: 'LITERAL' } as const;
  return [
    cluster === 'source'
      ? { principal: 'User:replicator', ...topics, operation: 'READ' }
      : { principal: 'User:replicator', ...topics, operation: 'ALL' },
    { principal: 'User:app', ...topics, operation: 'READ' },
    { principal: 'User:app', ...groups, operation: 'READ' },
  ];
}

/** A config of `role` on the secured bed: its own users, the bed's prefix, streams verified, not made. */
function serviceConfig(role: Role | 'provision', sections: Record<string, unknown>): TestConfig {
  const users = USERS[role];
  const config = secureTestConfig(bed, sections, {
    natsUser: users.nats,
    ...(users.kafka === undefined ? {} : { kafkaUser: users.kafka }),
  });
  return {
    ...config,
    nats: {
      ...config.nats,
      subjectPrefix: PREFIX,
      ...(role === 'provision' ? {} : { provisioning: 'verify' }),
    },
  };
}

/** A NATS connection of the bed's admin, who may read every stream. */
async function adminNats(): Promise<NatsConnection> {
  const { security } = bed;
  if (security === undefined) throw new Error('the bed is not secured');
  const nc = await connect({
    servers: bed.nats.url,
    tls: { caFile: security.caFile },
    user: security.natsAdmin.user,
    pass: security.natsAdmin.password,
  });
  onTestFinished(() => nc.close());
  return nc;
}

beforeAll(async () => {
  bed = await startTestbed({
    log: (line) => console.log(`[secured] ${line}`),
    secure: defaultSecureOptions(),
  });
  for (const cluster of ['source', 'target'] as const) {
    await grantAcls(bed, cluster, [
      ...(['collector', 'translator', 'committer'] as const).flatMap((role) =>
        aclsOf(role, USERS[role].kafka!, cluster),
      ),
      ...helperAcls(cluster),
    ]);
  }
  const dir = await mkdtemp(join(tmpdir(), 'offsetsync-provision-'));
  const file = join(dir, 'config.yaml');
  await writeFile(
    file,
    stringify(
      serviceConfig('provision', { translator: { target: 'target' }, committer: { target: 'target' } }),
    ),
  );
  const provision = await runCli(['provision', '-c', file]);
  console.log(`[secured] offsetsync provision exited ${provision.code}:\n${provision.stdout}`);
  if (provision.code !== 0) throw new Error(`offsetsync provision failed: ${provision.stderr}`);
}, 300_000);

afterAll(async () => {
  if (bed !== undefined) await stopTestbed(bed);
}, 60_000);

/** nats-server's log lines about a refused publish or subscription. */
async function natsViolations(): Promise<string[]> {
  const log = await readFile(bed.nats.logFile, 'utf8');
  return log.split('\n').filter((line) => /violation/i.test(line));
}

/** A health service on its own NATS user, its gRPC API over mutual TLS, and a client with the bed's certificate. */
async function startSecuredHealth(): Promise<{
  port: number;
  client: ReturnType<typeof healthClients>;
  service: ServiceProcess;
}> {
  const security = bedSecurity();
  const port = await freePort();
  const service = await startService(
    'health',
    serviceConfig('health', {
      health: {
        grpc: {
          host: '127.0.0.1',
          port,
          tls: {
            certFile: security.serverCertificate.certFile,
            keyFile: security.serverCertificate.keyFile,
            caFile: security.caFile,
          },
        },
      },
    }),
  );
  const client = healthClients(
    `127.0.0.1:${port}`,
    credentials.createSsl(
      readFileSync(security.caFile),
      readFileSync(security.clientCertificate.keyFile),
      readFileSync(security.clientCertificate.certFile),
    ),
  );
  await waitFor(
    'the health API over mutual TLS',
    async () => ((await client.listLinks()) ? true : undefined),
    {
      timeoutMs: 60_000,
      intervalMs: 250,
    },
  );
  return { port, client, service };
}

function bedSecurity(): TestbedSecurityInfo {
  const { security } = bed;
  if (security === undefined) throw new Error('the bed is not secured');
  return security;
}

describe('secured deployment', () => {
  it('fails a group over with 0 replayed and 0 skipped, every service on its own users, nothing refused', async () => {
    const security = bedSecurity();
    const { client, service: health } = await startSecuredHealth();
    const admin = bedKafkaCredentials(bed, security.kafkaAdmin.username);
    const { replayed, skipped, services } = await runFailover({
      kafka: (cluster) => bedKafkaClient(bed, cluster, security.kafkaAdmin.username),
      application: (cluster) => bedKafkaClient(bed, cluster, 'app'),
      adapter: (cluster) => testAdapter(bed[cluster].bootstrapServers, 'offsetsync-test', admin),
      replicatorCluster: (cluster) => ({
        bootstrapServers: bed[cluster].bootstrapServers,
        security: bedKafkaCredentials(bed, 'replicator'),
      }),
      serviceConfigs: (sections) => ({
        collector: serviceConfig('collector', sections),
        translator: serviceConfig('translator', sections),
        committer: serviceConfig('committer', sections),
      }),
      nats: adminNats,
    });
    expect({ replayed, skipped }).toEqual({ replayed: 0, skipped: 0 });

    // Health, over mutual TLS, sees every side of the link and no problem of any instance.
    const link = await waitFor(
      'the link HEALTHY in the health API',
      async () => {
        const found = (await client.listLinks()).links.find(
          (l) => l.sourceCluster === 'source' && l.targetCluster === 'target',
        );
        return found?.state === LinkState.LINK_STATE_HEALTHY ? found : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    expect(link.instances.map((i) => i.role).sort()).toEqual(
      [
        ServiceRole.SERVICE_ROLE_COLLECTOR,
        ServiceRole.SERVICE_ROLE_TRANSLATOR,
        ServiceRole.SERVICE_ROLE_COMMITTER,
      ].sort(),
    );

    const refused = /AUTH_FAILED|NOT_AUTHORIZED|Permissions Violation|Authorization Violation/;
    for (const service of [...services, health]) {
      const lines = (await service.log()).split('\n').filter((line) => refused.test(line));
      expect({ role: service.role, lines }).toEqual({ role: service.role, lines: [] });
    }
    expect(await natsViolations()).toEqual([]);
  });
  it('answers health requests only from clients with a certificate of its CA, `offsetsync status` included', async () => {
    const security = bedSecurity();
    const { port } = await startSecuredHealth();
    const address = `127.0.0.1:${port}`;
    const ca = readFileSync(security.caFile);
    // A certificate the server must not accept: from a CA of its own, not the bed's.
    const strangerDir = await mkdtemp(join(tmpdir(), 'offsetsync-stranger-ca-'));
    const strangerCa = await createCertificateAuthority(strangerDir, { name: 'stranger-ca' });
    const stranger = await issueCertificate(strangerCa, {
      name: 'stranger-client',
      dir: strangerDir,
      clientAuth: true,
    });
    const refused = async (channel: ReturnType<typeof credentials.createSsl>) => {
      try {
        await healthClients(address, channel).listLinks();
        return false;
      } catch {
        return true;
      }
    };
    expect(await refused(credentials.createSsl(ca))).toBe(true);
    expect(
      await refused(
        credentials.createSsl(ca, readFileSync(stranger.keyFile), readFileSync(stranger.certFile)),
      ),
    ).toBe(true);
    expect(
      await refused(
        credentials.createSsl(
          ca,
          readFileSync(security.clientCertificate.keyFile),
          readFileSync(security.clientCertificate.certFile),
        ),
      ),
    ).toBe(false);

    const status = (extra: string[]) =>
      runCli([
        'status',
        '--address',
        address,
        '--json',
        '--no-groups',
        '--ca-file',
        security.caFile,
        ...extra,
      ]);
    const withCertificate = await status([
      '--cert-file',
      security.clientCertificate.certFile,
      '--key-file',
      security.clientCertificate.keyFile,
    ]);
    expect(withCertificate.code, withCertificate.stderr).toBe(0);
    expect(JSON.parse(withCertificate.stdout)).toHaveProperty('links');
    const withoutCertificate = await status([]);
    expect(withoutCertificate.code).toBe(69);
  });
});
