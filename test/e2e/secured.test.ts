// offsetsync on the secured bed (test/support/secured-deployment.ts). Besides the failover scenario's own
// verdict, nothing may have been refused along the way: no permission violation in nats-server's log, no
// AUTH_FAILED or NOT_AUTHORIZED in any service's.
import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LinkState, ServiceRole } from '@offsetsync/contracts';
import {
  bedKafkaCredentials,
  createCertificateAuthority,
  issueCertificate,
  stopTestbed,
} from '../infra/testbed.js';
import { waitFor } from '../infra/wait.js';
import { runCli } from '../support/cli.js';
import { runFailover } from '../support/failover-scenario.js';
import { healthClients } from '../support/health-client.js';
import { bedKafkaClient, testAdapter } from '../support/kafka-clients.js';
import { startSecuredDeployment, type SecuredDeployment } from '../support/secured-deployment.js';

let deployment: SecuredDeployment;

beforeAll(async () => {
  deployment = await startSecuredDeployment((line) => console.log(`[secured] ${line}`));
}, 300_000);

afterAll(async () => {
  if (deployment !== undefined) await stopTestbed(deployment.bed);
}, 60_000);

describe('secured deployment', () => {
  it('fails a group over with 0 replayed and 0 skipped, every service on its own users, nothing refused', async () => {
    const { bed, security, serviceConfig } = deployment;
    const { client, service: health } = await deployment.startHealth();
    const admin = bedKafkaCredentials(bed, security.kafkaAdmin.username);
    const { moves, services } = await runFailover({
      targets: ['target'],
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
      nats: () => deployment.adminNats(),
    });
    expect(moves.map(({ target, replayed, skipped }) => ({ target, replayed, skipped }))).toEqual([
      { target: 'target', replayed: 0, skipped: 0 },
    ]);

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
    expect(await deployment.natsViolations()).toEqual([]);
  });
  it('answers health requests only from clients with a certificate of its CA, `offsetsync status` included', async () => {
    const { security } = deployment;
    const { port } = await deployment.startHealth();
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
