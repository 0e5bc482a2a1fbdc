// Refused access on the secured bed (test/support/secured-deployment.ts), while the services run:
// - each Kafka ACL `requiredKafkaAcls` (and so docs/security.md) lists for a service, removed in turn: the
//   service names the missing ACL in one log line and in its heartbeat, health names it in the link's
//   reason within three of the service's heartbeats, and once the ACL is granted again the commit that
//   waited converges exactly on the target with no new source commit;
// - a wrong SASL password: the committer keeps running, reports AUTH_FAILED, and commits without a
//   restart once its password file is corrected.
import { readFile, writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { ApplyOutcome, Heartbeat, Names, OffsetApplied, ServiceRole } from '@offsetsync/contracts';
import { startReplicator, startService, type Role, type TestReplicator } from '@offsetsync/harness';
import type { RequiredAcl } from '@offsetsync/kafka';
import { bedKafkaCredentials, stopTestbed } from '../infra/testbed.js';
import { waitFor } from '../infra/wait.js';
import { lastOnSubject } from '../support/jetstream.js';
import { grantAcls, revokeAcls } from '../support/kafka-acls.js';
import { bedKafkaClient, connectedAdmin } from '../support/kafka-clients.js';
import { uniqueName } from '../support/names.js';
import {
  aclSpec,
  KAFKA_ROLES,
  requiredAclsOf,
  SECURED_PREFIX,
  SECURED_USERS,
  startSecuredDeployment,
  type SecuredDeployment,
} from '../support/secured-deployment.js';

/** The default heartbeat interval: "within three heartbeats" is meant for production's pace. */
const HEARTBEAT = { intervalMs: '2s' };
const RECORDS = 3_000;
const names = new Names(SECURED_PREFIX);

let deployment: SecuredDeployment;

beforeAll(async () => {
  deployment = await startSecuredDeployment((line) => console.log(`[secured-acls] ${line}`));
}, 300_000);

afterAll(async () => {
  if (deployment !== undefined) await stopTestbed(deployment.bed);
}, 60_000);

/** One heartbeat as the test saw it arrive. */
interface SeenBeat {
  beat: Heartbeat;
  atMs: number;
}

/** Every heartbeat published under the bed's prefix from now on, as the admin sees them. */
async function recordHeartbeats(): Promise<SeenBeat[]> {
  const nc = await deployment.adminNats();
  const seen: SeenBeat[] = [];
  const subscription = nc.subscribe(names.heartbeatFilter());
  void (async () => {
    for await (const message of subscription)
      seen.push({ beat: Heartbeat.decode(message.data), atMs: Date.now() });
  })();
  await nc.flush();
  return seen;
}

const ROLES: Record<Role, ServiceRole> = {
  collector: ServiceRole.SERVICE_ROLE_COLLECTOR,
  translator: ServiceRole.SERVICE_ROLE_TRANSLATOR,
  committer: ServiceRole.SERVICE_ROLE_COMMITTER,
  health: ServiceRole.SERVICE_ROLE_HEALTH,
};

/** A topic of one partition with {@link RECORDS} records on the source, copied to the target. */
async function copiedTopic(): Promise<{ topic: string; replicator: TestReplicator }> {
  const { bed, security } = deployment;
  const topic = uniqueName('acls');
  const kafka = bedKafkaClient(bed, 'source', security.kafkaAdmin.username);
  const admin = await connectedAdmin(kafka);
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  const producer = kafka.producer();
  await producer.connect();
  onTestFinished(() => producer.disconnect());
  await producer.send({
    topic,
    messages: Array.from({ length: RECORDS }, (_, i) => ({ key: `k${i % 13}`, value: `id:${i}` })),
  });
  const cluster = (side: 'source' | 'target') => ({
    bootstrapServers: bed[side].bootstrapServers,
    security: bedKafkaCredentials(bed, 'replicator'),
  });
  const replicator = await startReplicator({ source: cluster('source'), target: cluster('target'), topic });
  await replicator.waitUntilCaughtUp(60_000);
  return { topic, replicator };
}

/** The application's commits on the source, and what they must become on the target. */
function application(topic: string, group: string, replicator: TestReplicator) {
  const { bed, security } = deployment;
  let sourceAdmin: Admin | undefined;
  let targetAdmin: Admin | undefined;
  const admins = async () => {
    sourceAdmin ??= await connectedAdmin(bedKafkaClient(bed, 'source', security.kafkaAdmin.username));
    targetAdmin ??= await connectedAdmin(bedKafkaClient(bed, 'target', security.kafkaAdmin.username));
    return { sourceAdmin, targetAdmin };
  };
  return {
    /** The group commits `offset` on the source (as an application whose members left). */
    async commit(offset: number): Promise<void> {
      const { sourceAdmin } = await admins();
      await sourceAdmin.setOffsets({
        groupId: group,
        topic,
        partitions: [{ partition: 0, offset: String(offset) }],
      });
    },
    /** Waits until `offset` is applied exactly and the target's committed offset is its counterpart's. */
    async converged(offset: number, timeoutMs: number): Promise<void> {
      const copy = replicator.copies().find((c) => c.partition === 0 && c.sourceOffset === offset);
      if (copy === undefined) throw new Error(`no copy of source offset ${offset}`);
      const jsm = await (await deployment.adminNats()).jetstreamManager();
      const { targetAdmin } = await admins();
      await waitFor(
        `source offset ${offset} applied exactly on the target at ${copy.targetOffset}`,
        async () => {
          const message = await lastOnSubject(
            jsm,
            names.stream('applied'),
            names.applied('source', 'target', { group, topic, partition: 0 }),
          );
          const event = message && OffsetApplied.decode(message.data);
          if (event?.outcome !== ApplyOutcome.APPLY_OUTCOME_APPLIED || event.sourceOffset !== offset)
            return undefined;
          const [committed] = await targetAdmin.fetchOffsets({ groupId: group, topics: [topic] });
          const onTarget = Number(committed?.partitions[0]?.offset ?? -1);
          return event.exact && event.targetOffset === copy.targetOffset && onTarget === copy.targetOffset
            ? true
            : undefined;
        },
        { timeoutMs, intervalMs: 250 },
      );
    },
  };
}

/** The resources an ACL covers, as a problem's `resource` names them: `TOPIC:*` covers every topic. */
function covers(acl: RequiredAcl, resource: string): boolean {
  const [type, ...rest] = resource.split(':');
  const name = rest.join(':');
  if (type !== acl.resourceType) return false;
  if (acl.patternType === 'PREFIXED') return name.startsWith(acl.resourceName);
  return acl.resourceName === '*' || acl.resourceName === name;
}

/** The warnings and errors of a service's log from `sinceMs` on: "+<ms> <message>: <error message>". */
function problemsSince(log: string, sinceMs: number): string[] {
  return log
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map(
      (line) => JSON.parse(line) as { level: string; time: string; msg: string; err?: { message?: string } },
    )
    .filter((entry) => ['warn', 'error', 'fatal'].includes(entry.level) && Date.parse(entry.time) >= sinceMs)
    .map((entry) => `+${Date.parse(entry.time) - sinceMs} ${entry.msg}: ${entry.err?.message ?? ''}`);
}

function sections(group: string): Record<string, unknown> {
  return {
    heartbeat: HEARTBEAT,
    collector: { cluster: 'source', groups: { include: [`^${group}$`] }, fetchMaxWaitMs: '20ms' },
    translator: { target: 'target', pendingRetryMinMs: '100ms', pendingRetryMaxMs: '1s' },
    committer: { target: 'target' },
  };
}

describe('secured deployment, access refused while it runs', () => {
  it('names each missing ACL in the log and in health within three heartbeats, and converges exactly once it is granted again', async () => {
    const { bed, serviceConfig } = deployment;
    const { topic, replicator } = await copiedTopic();
    const group = uniqueName('acls-app');
    const beats = await recordHeartbeats();
    const config = sections(group);
    const services = Object.fromEntries(
      await Promise.all(
        KAFKA_ROLES.map(
          async (role) => [role, await startService(role, serviceConfig(role, config))] as const,
        ),
      ),
    ) as Record<(typeof KAFKA_ROLES)[number], Awaited<ReturnType<typeof startService>>>;
    const { client } = await deployment.startHealth({ heartbeat: HEARTBEAT });
    const app = application(topic, group, replicator);
    // An ACL the test took away is given back even when it fails, so the next test runs on a whole bed.
    const revoked = new Map<RequiredAcl, ReturnType<typeof aclSpec>>();
    onTestFinished(async () => {
      for (const [acl, spec] of revoked) await grantAcls(bed, acl.cluster, [spec]);
    });
    let offset = 100;
    await app.commit(offset);
    await app.converged(offset, 120_000);

    for (const role of KAFKA_ROLES) {
      for (const acl of requiredAclsOf(role)) {
        const label = `${role}: ${acl.operation} on ${acl.resourceType}:${acl.resourceName} (${acl.cluster})`;
        const spec = aclSpec(acl, SECURED_USERS[role].kafka!);
        const revokedAt = Date.now();
        await revokeAcls(bed, acl.cluster, [spec]);
        revoked.set(acl, spec);
        offset += 100;
        await app.commit(offset);

        // Health names it in the link's reason; count the service's heartbeats since the removal.
        const pattern = new RegExp(`${role} (\\S+) reports NOT_AUTHORIZED on (\\S+)`);
        const { reason, heartbeatsSince } = await waitFor(
          `${label}: named in health`,
          async () => {
            const link = (await client.listLinks()).links.find(
              (l) => l.sourceCluster === 'source' && l.targetCluster === 'target',
            );
            const match = link?.reason.match(pattern);
            if (match === null || match === undefined || !covers(acl, match[2]!)) return undefined;
            const since = beats.filter(
              (b) => b.beat.role === ROLES[role] && b.beat.instanceId === match[1] && b.atMs >= revokedAt,
            ).length;
            return { reason: link!.reason, heartbeatsSince: since };
          },
          { timeoutMs: 60_000, intervalMs: 100 },
        );
        const lastBeat = beats.filter((b) => b.beat.role === ROLES[role]).at(-1)?.beat;
        console.log(
          `[secured-acls] ${label}: after ${heartbeatsSince} heartbeats health says: ${reason}; ` +
            `the ${role}'s heartbeat: ${JSON.stringify(lastBeat?.problems.map((p) => p.detail))}`,
        );
        const problems = problemsSince(await services[role].log(), revokedAt);
        expect({ label, heartbeatsSince: Math.min(heartbeatsSince, 3), problems }).toEqual({
          label,
          heartbeatsSince,
          problems,
        });

        // One log line since the removal names the ACL to grant: the revoked operation itself, or the
        // refused one with the revoked one among those said to imply it ("ALLOW DESCRIBE on TOPIC:t (READ,
        // WRITE, DELETE or ALTER imply it)").
        const missing = new RegExp(
          `missing ACL ALLOW (\\w+) on ${acl.resourceType}:(\\S+?)(?:[\\s",):]|$)(?:\\(([A-Z_, ]+?) or ([A-Z_]+) imply it\\))?`,
        );
        const named = problems.some((l) => {
          const found = l.match(missing);
          if (found === null || !covers(acl, `${acl.resourceType}:${found[2]}`)) return false;
          const implying = [...(found[3]?.split(', ') ?? []), ...(found[4] === undefined ? [] : [found[4]])];
          return found[1] === acl.operation || implying.includes(acl.operation);
        });
        expect({ label, named, problems }).toEqual({ label, named: true, problems });

        // Granted again: the commit that waited converges, with no new commit on the source.
        await grantAcls(bed, acl.cluster, [spec]);
        revoked.delete(acl);
        const grantedAt = Date.now();
        await app.converged(offset, 180_000);
        console.log(`[secured-acls] ${label}: converged ${Date.now() - grantedAt} ms after the grant`);
      }
    }
    for (const role of KAFKA_ROLES)
      expect({ role, running: services[role].running() }).toEqual({ role, running: true });
  }, 900_000);

  it('keeps a committer with a wrong Kafka password running, reports AUTH_FAILED, and commits once the file is right', async () => {
    const { security, serviceConfig } = deployment;
    const { topic, replicator } = await copiedTopic();
    const group = uniqueName('auth-app');
    const config = sections(group);
    const user = SECURED_USERS.committer.kafka!;
    const dir = await mkdtemp(join(tmpdir(), 'offsetsync-wrong-password-'));
    const passwordFile = join(dir, 'password');
    await writeFile(passwordFile, 'not-the-password');
    const committerConfig = serviceConfig('committer', config);
    const clusters = committerConfig.clusters as Record<string, { sasl: Record<string, unknown> }>;
    for (const cluster of Object.values(clusters)) cluster.sasl = { ...cluster.sasl, passwordFile };
    await startService('collector', serviceConfig('collector', config));
    await startService('translator', serviceConfig('translator', config));
    const committer = await startService('committer', committerConfig);
    const { client } = await deployment.startHealth({ heartbeat: HEARTBEAT });
    const app = application(topic, group, replicator);
    await app.commit(250);

    const reason = await waitFor(
      'AUTH_FAILED of the committer in health',
      async () => {
        const link = (await client.listLinks()).links.find(
          (l) => l.sourceCluster === 'source' && l.targetCluster === 'target',
        );
        return link?.reason.match(/committer \S+ reports AUTH_FAILED[^;]*/)?.[0];
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    console.log(`[secured-acls] wrong password: health says: ${reason}`);
    expect(committer.running()).toBe(true);
    const log = await committer.log();
    expect(log).toMatch(/SASL authentication failed/);
    expect(log).not.toContain('not-the-password');

    // The Secret is corrected: the next connection reads the file again.
    await writeFile(passwordFile, await readFile(security.kafkaPasswordFiles[user]!, 'utf8'));
    await app.converged(250, 180_000);
    expect(committer.running()).toBe(true);
  }, 400_000);
});
