// Issue 17: each service run as a process with what a Kubernetes pod and a developer's shell put in its
// environment next to its settings: the service links Kubernetes writes for Services whose names carry
// the offsetsync prefix, and the project's own tool variables. Each must start and keep running, read
// its settings from the environment as before, and still exit 2 on a mistyped setting.
import { describe, expect, inject, it } from 'vitest';
import type { ServiceRole } from '@offsetsync/contracts';
import { Names, type Heartbeat } from '@offsetsync/contracts';
import { startService } from '@offsetsync/harness';
import { GiveUp } from '@offsetsync/testbed';
import { freePort } from '../infra/free-port.js';
import { waitFor } from '../infra/wait.js';
import { testConfig } from '../support/config.js';
import { heartbeats, natsConnection } from '../support/jetstream.js';
import { uniqueName } from '../support/names.js';
import { SERVICE_ROLES } from '../support/service-roles.js';

const testbed = inject('testbed');

const ROLES = SERVICE_ROLES;

/**
 * What Kubernetes gives a pod for the Services `offsetsync-health` (the chart's, one named port),
 * `offsetsync-collector-metrics` (two named ports, one UDP) and `offsetsync` (IPv6, one unnamed port):
 * every shape of service-link variable, written out as the kubelet writes them.
 */
const SERVICE_LINKS = {
  OFFSETSYNC_HEALTH_SERVICE_HOST: '10.96.0.10',
  OFFSETSYNC_HEALTH_SERVICE_PORT: '9090',
  OFFSETSYNC_HEALTH_SERVICE_PORT_GRPC: '9090',
  OFFSETSYNC_HEALTH_PORT: 'tcp://10.96.0.10:9090',
  OFFSETSYNC_HEALTH_PORT_9090_TCP: 'tcp://10.96.0.10:9090',
  OFFSETSYNC_HEALTH_PORT_9090_TCP_PROTO: 'tcp',
  OFFSETSYNC_HEALTH_PORT_9090_TCP_PORT: '9090',
  OFFSETSYNC_HEALTH_PORT_9090_TCP_ADDR: '10.96.0.10',
  OFFSETSYNC_COLLECTOR_METRICS_SERVICE_HOST: '10.96.0.11',
  OFFSETSYNC_COLLECTOR_METRICS_SERVICE_PORT: '9464',
  OFFSETSYNC_COLLECTOR_METRICS_SERVICE_PORT_METRICS: '9464',
  OFFSETSYNC_COLLECTOR_METRICS_SERVICE_PORT_STATS_D: '8125',
  OFFSETSYNC_COLLECTOR_METRICS_PORT: 'tcp://10.96.0.11:9464',
  OFFSETSYNC_COLLECTOR_METRICS_PORT_9464_TCP: 'tcp://10.96.0.11:9464',
  OFFSETSYNC_COLLECTOR_METRICS_PORT_9464_TCP_PROTO: 'tcp',
  OFFSETSYNC_COLLECTOR_METRICS_PORT_9464_TCP_PORT: '9464',
  OFFSETSYNC_COLLECTOR_METRICS_PORT_9464_TCP_ADDR: '10.96.0.11',
  OFFSETSYNC_COLLECTOR_METRICS_PORT_8125_UDP: 'udp://10.96.0.11:8125',
  OFFSETSYNC_COLLECTOR_METRICS_PORT_8125_UDP_PROTO: 'udp',
  OFFSETSYNC_COLLECTOR_METRICS_PORT_8125_UDP_PORT: '8125',
  OFFSETSYNC_COLLECTOR_METRICS_PORT_8125_UDP_ADDR: '10.96.0.11',
  OFFSETSYNC_SERVICE_HOST: 'fd00:10:96::12',
  OFFSETSYNC_SERVICE_PORT: '50051',
  OFFSETSYNC_PORT: 'sctp://[fd00:10:96::12]:50051',
  OFFSETSYNC_PORT_50051_SCTP: 'sctp://[fd00:10:96::12]:50051',
  OFFSETSYNC_PORT_50051_SCTP_PROTO: 'sctp',
  OFFSETSYNC_PORT_50051_SCTP_PORT: '50051',
  OFFSETSYNC_PORT_50051_SCTP_ADDR: 'fd00:10:96::12',
};

/** The project's own tool variables, as a shell set up for the test bed has them. */
const TOOL_VARIABLES = {
  OFFSETSYNC_TESTBED: 'reuse',
  OFFSETSYNC_TESTBED_FILE: '/tmp/offsetsync-testbed.json',
  OFFSETSYNC_INFRA_CACHE: '/tmp/offsetsync-cache',
};

/** One config for all four roles: the test's own subject prefix, health on a free port. */
async function fourRoleConfig() {
  const config = testConfig(testbed, {
    // Nothing is committed on the source for this test's groups: the collector only has to run.
    collector: { cluster: 'source', groups: { include: [`^${uniqueName('none')}$`] } },
    translator: { target: 'target' },
    committer: { target: 'target' },
    health: { grpc: { host: '127.0.0.1', port: await freePort() } },
  });
  return { config, names: new Names(config.nats.subjectPrefix) };
}

describe('services in an environment with OFFSETSYNC_* variables that are not settings', () => {
  it('each service starts, reads its settings from the environment and keeps running next to Kubernetes service links and the tool variables', async () => {
    const { config, names } = await fourRoleConfig();
    const jsm = await (await natsConnection(testbed.nats.url)).jetstreamManager();
    const instanceId = uniqueName('svc-env');
    const services = await Promise.all(
      ROLES.map(({ role }) =>
        startService(role, config, {
          env: {
            ...SERVICE_LINKS,
            ...TOOL_VARIABLES,
            // A setting given in the environment next to them is still read: the heartbeats carry it.
            OFFSETSYNC_INSTANCE__ID: `${instanceId}-${role}`,
          },
        }),
      ),
    );

    const beatOf = async (heartbeatRole: ServiceRole, id: string): Promise<Heartbeat | undefined> =>
      (await heartbeats(jsm, names, heartbeatRole).catch(() => [])).find((b) => b.instanceId === id);
    await Promise.all(
      ROLES.map(async ({ role, heartbeatRole }, index) => {
        const service = services[index]!;
        const id = `${instanceId}-${role}`;
        const first = await waitFor(
          `a heartbeat of the ${role} ${id}`,
          async () => {
            if (!service.running()) throw new GiveUp(`the ${role} exited before its first heartbeat`);
            return beatOf(heartbeatRole, id);
          },
          { timeoutMs: 45_000, intervalMs: 200 },
        );
        // A later heartbeat: the service is past its start and still at work.
        await waitFor(
          `a second heartbeat of the ${role}`,
          async () => {
            const beat = await beatOf(heartbeatRole, id);
            return beat !== undefined && beat.sentAtMs > first.sentAtMs ? beat : undefined;
          },
          { timeoutMs: 15_000, intervalMs: 200 },
        );
        expect(service.running(), `${role} is running`).toBe(true);
        expect(await service.log(), role).not.toMatch(/invalid configuration|unknown environment variable/);
      }),
    );
  });

  it('each service still exits 2 on a mistyped setting next to them, naming it', async () => {
    const { config } = await fourRoleConfig();
    const cases = ROLES.flatMap(({ role }) =>
      ['OFFSETSYNC_NATS__SERVRES', 'OFFSETSYNC_LINK'].map((typo) => ({ role, typo })),
    );
    await Promise.all(
      cases.map(async ({ role, typo }) => {
        const service = await startService(role, config, {
          env: { ...SERVICE_LINKS, ...TOOL_VARIABLES, [typo]: 'x' },
        });
        // Polled with a deadline: a service that wrongly accepts the typo would otherwise run on.
        await waitFor(
          `the ${role} with ${typo} to exit`,
          () => Promise.resolve(service.running() ? undefined : true),
          { timeoutMs: 30_000, intervalMs: 100 },
        );
        expect(await service.exited, `${role} with ${typo}`).toBe(2);
        const log = await service.log();
        // The typo is the one problem: nothing of the pod's or the shell's variables is reported with it.
        expect(log, `${role} with ${typo}`).toContain('invalid configuration (1 problem)');
        expect(log, `${role} with ${typo}`).toContain(`env:${typo}: unknown environment variable`);
      }),
    );
  });
});
