// offsetsync's deployment on the secured bed, as production runs it: Kafka only over SASL_SSL with SCRAM
// users and enforced ACLs, NATS only over TLS with one user per service holding exactly the permissions
// `offsetsync security nats-config` prints, streams and consumers made beforehand by `offsetsync
// provision` (the only admin step), every service in `nats.provisioning: verify` on its own credentials.
// The ACLs granted are exactly those `requiredKafkaAcls` (and so docs/security.md) names, plus what the
// test's stand-ins (replicator, application) need. Used by test/e2e/secured*.test.ts.
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials } from '@grpc/grpc-js';
import { connect, type NatsConnection } from 'nats';
import { onTestFinished } from 'vitest';
import { stringify } from 'yaml';
import { startService, type Role, type ServiceProcess } from '@offsetsync/harness';
import { requiredKafkaAcls, type KafkaRole, type RequiredAcl } from '@offsetsync/kafka';
import { defaultSecureOptions } from '../infra/default-secure-options.js';
import { freePort } from '../infra/free-port.js';
import { startTestbed, type TestbedInfo, type TestbedSecurityInfo } from '../infra/testbed.js';
import { waitFor } from '../infra/wait.js';
import { runCli } from './cli.js';
import { secureTestConfig, type TestConfig } from './config.js';
import { healthClients } from './health-client.js';
import { grantAcls, type AclSpec } from './kafka-acls.js';

/** The subject prefix the bed's NATS users were made for (defaultSecureOptions). */
export const SECURED_PREFIX = 'osync';
/** The collector's consumer group: the default for cluster `source`. */
const COLLECTOR_GROUP = 'offsetsync-collector-source';

/** Each role's NATS user (deploymentNatsUsers for the link source -> target) and Kafka user. */
export const SECURED_USERS: Record<Role | 'provision', { nats: string; kafka?: string }> = {
  collector: { nats: 'collector-source', kafka: 'offsetsync-collector' },
  translator: { nats: 'translator-target', kafka: 'offsetsync-translator' },
  committer: { nats: 'committer-target', kafka: 'offsetsync-committer' },
  // Health never connects to Kafka.
  health: { nats: 'health' },
  provision: { nats: 'provision' },
};

/** The roles that log in to Kafka. */
export const KAFKA_ROLES = ['collector', 'translator', 'committer'] as const;

/** The ACLs `requiredKafkaAcls` lists for `role` on both clusters of the link source -> target. */
export function requiredAclsOf(role: KafkaRole): RequiredAcl[] {
  return requiredKafkaAcls(role, { collectorGroup: COLLECTOR_GROUP });
}

/** `acl` as an ACL of the principal `User:<user>`. */
export function aclSpec(acl: RequiredAcl, user: string): AclSpec {
  const { resourceType, resourceName, patternType, operation } = acl;
  return { principal: `User:${user}`, resourceType, resourceName, patternType, operation };
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

/** The secured bed with the ACLs granted and the streams provisioned. */
export interface SecuredDeployment {
  bed: TestbedInfo;
  security: TestbedSecurityInfo;
  /** A config of `role`: its own users, the bed's prefix, streams verified, not made. */
  serviceConfig: (role: Role | 'provision', sections: Record<string, unknown>) => TestConfig;
  /** A NATS connection of the bed's admin (closed when the test finishes), who may read every stream. */
  adminNats(): Promise<NatsConnection>;
  /** nats-server's log lines about a refused publish or subscription. */
  natsViolations(): Promise<string[]>;
  /** A health service on its own NATS user, its gRPC API over mutual TLS, and a client with the bed's certificate. */
  startHealth(sections?: Record<string, unknown>): Promise<{
    port: number;
    client: ReturnType<typeof healthClients>;
    service: ServiceProcess;
  }>;
}

/** Starts the secured bed, grants every role's ACLs and runs `offsetsync provision` as the admin step. */
export async function startSecuredDeployment(log: (line: string) => void): Promise<SecuredDeployment> {
  const bed = await startTestbed({ log, secure: defaultSecureOptions() });
  const { security } = bed;
  if (security === undefined) throw new Error('the bed is not secured');
  for (const cluster of ['source', 'target'] as const) {
    await grantAcls(bed, cluster, [
      ...KAFKA_ROLES.flatMap((role) =>
        requiredAclsOf(role)
          .filter((acl) => acl.cluster === cluster)
          .map((acl) => aclSpec(acl, SECURED_USERS[role].kafka!)),
      ),
      ...helperAcls(cluster),
    ]);
  }
  const serviceConfig = (role: Role | 'provision', sections: Record<string, unknown>): TestConfig => {
    const users = SECURED_USERS[role];
    const config = secureTestConfig(bed, sections, {
      natsUser: users.nats,
      ...(users.kafka === undefined ? {} : { kafkaUser: users.kafka }),
    });
    return {
      ...config,
      nats: {
        ...config.nats,
        subjectPrefix: SECURED_PREFIX,
        ...(role === 'provision' ? {} : { provisioning: 'verify' }),
      },
    };
  };
  const dir = await mkdtemp(join(tmpdir(), 'offsetsync-provision-'));
  const file = join(dir, 'config.yaml');
  await writeFile(
    file,
    stringify(
      serviceConfig('provision', { translator: { target: 'target' }, committer: { target: 'target' } }),
    ),
  );
  const provision = await runCli(['provision', '-c', file]);
  log(`offsetsync provision exited ${provision.code}:\n${provision.stdout}`);
  if (provision.code !== 0) throw new Error(`offsetsync provision failed: ${provision.stderr}`);

  return {
    bed,
    security,
    serviceConfig,
    async adminNats() {
      const nc = await connect({
        servers: bed.nats.url,
        tls: { caFile: security.caFile },
        user: security.natsAdmin.user,
        pass: security.natsAdmin.password,
      });
      onTestFinished(() => nc.close());
      return nc;
    },
    async natsViolations() {
      const text = await readFile(bed.nats.logFile, 'utf8');
      return text.split('\n').filter((line) => /violation/i.test(line));
    },
    async startHealth(sections = {}) {
      const port = await freePort();
      const service = await startService(
        'health',
        serviceConfig('health', {
          ...sections,
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
    },
  };
}
