import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeConfigSchema } from './describe-config.js';
import { ENV_PREFIX, envNameForPath, TOOL_ENV_VARIABLES } from './env-names.js';
import { ignoredEnvVariables, readEnvOverrides, resolveEnvName } from './env-overrides.js';
import { kubernetesServiceLink } from './service-link-env.js';

/** A Service as far as the kubelet's service-link variables go. */
interface KubeService {
  name: string;
  clusterIp: string;
  ports: { name?: string; port: number; protocol: 'TCP' | 'UDP' | 'SCTP' }[];
}

/**
 * The variables the kubelet gives a pod for `service` (pkg/kubelet/envvars FromServices, with its
 * Docker-link variables), written here again so the tests check the loader against Kubernetes' rules
 * rather than against its own.
 */
function kubeletEnv(service: KubeService): Record<string, string> {
  const prefix = service.name.toUpperCase().replace(/-/g, '_');
  const hostPort = (port: number) =>
    service.clusterIp.includes(':') ? `[${service.clusterIp}]:${port}` : `${service.clusterIp}:${port}`;
  const env: Record<string, string> = {
    [`${prefix}_SERVICE_HOST`]: service.clusterIp,
    [`${prefix}_SERVICE_PORT`]: String(service.ports[0]?.port),
  };
  for (const port of service.ports) {
    if (port.name !== undefined)
      env[`${prefix}_SERVICE_PORT_${port.name.toUpperCase().replace(/-/g, '_')}`] = String(port.port);
  }
  for (const [index, port] of service.ports.entries()) {
    const url = `${port.protocol.toLowerCase()}://${hostPort(port.port)}`;
    if (index === 0) env[`${prefix}_PORT`] = url;
    const portPrefix = `${prefix}_PORT_${port.port}_${port.protocol}`;
    env[portPrefix] = url;
    env[`${portPrefix}_PROTO`] = port.protocol.toLowerCase();
    env[`${portPrefix}_PORT`] = String(port.port);
    env[`${portPrefix}_ADDR`] = service.clusterIp;
  }
  return env;
}

/** The chart's health Service of a release called `offsetsync`, as in the issue. */
const HEALTH_SERVICE: KubeService = {
  name: 'offsetsync-health',
  clusterIp: '10.0.0.1',
  ports: [{ name: 'grpc', port: 9090, protocol: 'TCP' }],
};

/** DNS-1035 labels that Kubernetes turns into `OFFSETSYNC...` names: `offsetsync` or `offsetsync-<more>`. */
const prefixedServiceName = fc
  .stringMatching(/^(-[a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?)?$/)
  .map((rest) => `offsetsync${rest}`)
  // `--` gives `__`, the setting separator: such a Service cannot be told apart (see the test below).
  .filter((name) => !name.includes('--'));

/** IANA_SVC_NAME: up to 15 lower-case letters, digits and single `-`, at least one letter. */
const portName = fc
  .stringMatching(/^[a-z0-9]([-a-z0-9]{0,13}[a-z0-9])?$/)
  .filter((name) => /[a-z]/.test(name) && !name.includes('--'));

const kubeService: fc.Arbitrary<KubeService> = fc
  .record({
    name: prefixedServiceName,
    clusterIp: fc.oneof(fc.ipV4(), fc.ipV6()),
    ports: fc.uniqueArray(
      fc.record({
        name: portName,
        port: fc.integer({ min: 1, max: 65_535 }),
        protocol: fc.constantFrom('TCP' as const, 'UDP' as const, 'SCTP' as const),
      }),
      { minLength: 1, maxLength: 4, selector: (p) => p.name },
    ),
    firstUnnamed: fc.boolean(),
  })
  // Only a Service with a single port may leave it unnamed.
  .map(({ name, clusterIp, ports, firstUnnamed }) => ({
    name,
    clusterIp,
    ports:
      ports.length === 1 && firstUnnamed ? [{ port: ports[0]!.port, protocol: ports[0]!.protocol }] : ports,
  }));

const envAddressableRows = describeConfigSchema().filter((row) => row.env !== undefined);
const alias = fc
  .stringMatching(/^[a-z][a-z0-9-]{0,15}$/)
  .filter((a) => !a.includes('--') && !a.endsWith('-'));
/** The environment name of a real setting, with an arbitrary cluster alias where it has one. */
const settingName = fc
  .tuple(fc.constantFrom(...envAddressableRows), alias)
  .map(([row, a]) => envNameForPath(row.path.split('.').map((s) => (s === '<alias>' ? a : s))));

/** Values an operator gives settings: numbers, booleans, durations, words, hosts, lists. */
const settingValue = fc.constantFrom('8080', '0', 'true', 'false', '5s', '250', 'debug', 'x', 'a:1,b:2');

const TYPO_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_';
type TypoKind = 'delete' | 'replace' | 'insert' | 'swap';

/** `name` with one character deleted, replaced, inserted or swapped with its right neighbour at `at`. */
function applyTypo(name: string, kind: TypoKind, at: number, c: string): string {
  const i = at % (name.length + 1);
  switch (kind) {
    case 'delete':
      return name.slice(0, i) + name.slice(i + 1);
    case 'replace':
      return name.slice(0, i) + c + name.slice(i + 1);
    case 'insert':
      return name.slice(0, i) + c + name.slice(i);
    case 'swap':
      return name.slice(0, i) + (name[i + 1] ?? '') + (name[i] ?? '') + name.slice(i + 2);
  }
}

/**
 * Whether `typo` is a mistake to report: still an offsetsync variable (a typo in the prefix makes it no
 * more one than PATH), not a setting (a typo in a cluster alias names another cluster) nor a tool variable.
 */
function isMistypedSetting(typo: string): boolean {
  return typo.startsWith(ENV_PREFIX) && TOOL_ENV_VARIABLES[typo] === undefined && !resolveEnvName(typo).ok;
}

/** Every one-character typo of `name` (unfiltered). */
function allTypos(name: string): Set<string> {
  const typos = new Set<string>();
  for (const kind of ['delete', 'replace', 'insert', 'swap'] as const) {
    for (let at = 0; at <= name.length; at++) {
      for (const c of kind === 'delete' || kind === 'swap' ? '_' : TYPO_ALPHABET)
        typos.add(applyTypo(name, kind, at, c));
    }
  }
  typos.delete(name);
  return typos;
}

/** A one-character typo of a real setting's name that names no setting. */
const mistypedSetting = fc
  .tuple(
    settingName,
    fc.constantFrom<TypoKind>('delete', 'replace', 'insert', 'swap'),
    fc.nat(),
    fc.constantFrom(...TYPO_ALPHABET),
  )
  .map(([name, kind, at, c]) => applyTypo(name, kind, at, c))
  .filter(isMistypedSetting);

/**
 * For a typo, the environment most likely to hide it: a `_SERVICE_HOST` with an IP address for every
 * Service name the typo could be a link of.
 */
function anchorsFor(name: string): Record<string, string> {
  const anchors: Record<string, string> = {};
  for (let at = name.indexOf('_'); at !== -1; at = name.indexOf('_', at + 1)) {
    const host = `${name.slice(0, at)}_SERVICE_HOST`;
    if (host !== name) anchors[host] = '10.0.0.1';
  }
  return anchors;
}

describe('kubernetesServiceLink', () => {
  it("takes every variable of the chart's health Service for a service link", () => {
    const env = kubeletEnv(HEALTH_SERVICE);
    expect(Object.keys(env).sort()).toEqual([
      'OFFSETSYNC_HEALTH_PORT',
      'OFFSETSYNC_HEALTH_PORT_9090_TCP',
      'OFFSETSYNC_HEALTH_PORT_9090_TCP_ADDR',
      'OFFSETSYNC_HEALTH_PORT_9090_TCP_PORT',
      'OFFSETSYNC_HEALTH_PORT_9090_TCP_PROTO',
      'OFFSETSYNC_HEALTH_SERVICE_HOST',
      'OFFSETSYNC_HEALTH_SERVICE_PORT',
      'OFFSETSYNC_HEALTH_SERVICE_PORT_GRPC',
    ]);
    for (const [name, value] of Object.entries(env)) {
      expect(kubernetesServiceLink(name, value, env), name).toEqual({
        kind: 'service-link',
        service: 'offsetsync-health',
      });
    }
  });

  it('takes every service-link variable of any Service for one, IPv4 or IPv6, whatever its ports', () => {
    fc.assert(
      fc.property(kubeService, (service) => {
        const env = kubeletEnv(service);
        for (const [name, value] of Object.entries(env)) {
          expect(kubernetesServiceLink(name, value, env), name).toMatchObject({ kind: 'service-link' });
        }
      }),
    );
  });

  it.each([
    ['a Service without its _SERVICE_HOST', { OFFSETSYNC_X_PORT: 'tcp://10.0.0.1:80' }, /not set/],
    [
      'a _SERVICE_HOST that is no IP address',
      { OFFSETSYNC_X_SERVICE_HOST: 'x', OFFSETSYNC_X_SERVICE_PORT: '80' },
      /not an IP address/,
    ],
    [
      'a port where Kubernetes writes a URL (OFFSETSYNC_PROBES__PORT with one _ too few)',
      { OFFSETSYNC_PROBES_SERVICE_HOST: '10.0.0.1', OFFSETSYNC_PROBES_PORT: '8080' },
      /not what Kubernetes writes/,
    ],
    [
      'a URL naming another host than the ClusterIP',
      { OFFSETSYNC_X_SERVICE_HOST: '10.0.0.1', OFFSETSYNC_X_PORT_80_TCP: 'tcp://10.0.0.2:80' },
      /not what Kubernetes writes/,
    ],
    [
      'a port other than the one in the name',
      { OFFSETSYNC_X_SERVICE_HOST: '10.0.0.1', OFFSETSYNC_X_PORT_80_TCP_PORT: '81' },
      /not what Kubernetes writes/,
    ],
    [
      'a port beyond 65535',
      { OFFSETSYNC_X_SERVICE_HOST: '10.0.0.1', OFFSETSYNC_X_SERVICE_PORT: '65536' },
      /not what Kubernetes writes/,
    ],
  ])('does not take %s for a service link', (_, env: Record<string, string>, reason) => {
    const [name, value] = Object.entries(env).at(-1)!;
    const verdict = kubernetesServiceLink(name, value, env);
    expect(verdict.kind).toBe('mismatch');
    if (verdict.kind === 'mismatch') expect(verdict.reason).toMatch(reason);
  });

  it('never takes a name with the __ separator for a service link', () => {
    // What Kubernetes writes for a Service named offsetsync--x: reported, like any setting path that is wrong.
    const env = kubeletEnv({
      name: 'offsetsync--x',
      clusterIp: '10.0.0.1',
      ports: [{ port: 80, protocol: 'TCP' }],
    });
    for (const [name, value] of Object.entries(env)) {
      expect(kubernetesServiceLink(name, value, env)).toEqual({ kind: 'none' });
    }
    expect(readEnvOverrides(env).problems).toHaveLength(Object.keys(env).length);
  });

  it('finds no service-link shape in names that have none', () => {
    for (const name of [
      'OFFSETSYNC_LINK',
      'OFFSETSYNC_NATS__SERVRES',
      'OFFSETSYNC_SERVICE',
      'OFFSETSYNC_X_HOST',
    ]) {
      expect(kubernetesServiceLink(name, '10.0.0.1', { OFFSETSYNC_X_SERVICE_HOST: '10.0.0.1' })).toEqual({
        kind: 'none',
      });
    }
  });
});

describe('readEnvOverrides with Kubernetes service links and tool variables', () => {
  it('skips the service links of any Services and the tool variables, and reads the settings', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(kubeService, { minLength: 1, maxLength: 4, selector: (s) => s.name }),
        fc.uniqueArray(settingName, { maxLength: 5 }),
        (services, settings) => {
          const links = Object.assign({}, ...services.map(kubeletEnv)) as Record<string, string>;
          const tools = Object.fromEntries(Object.keys(TOOL_ENV_VARIABLES).map((name) => [name, 'x']));
          const env = {
            PATH: '/usr/bin',
            ...links,
            ...tools,
            ...Object.fromEntries(settings.map((s) => [s, '1'])),
          };
          const { overrides, problems, ignored } = readEnvOverrides(env);
          // Only values can be wrong for a setting here ('1' is no valid value for some); never its name.
          expect(problems.filter((p) => p.path.startsWith('env:'))).toEqual([]);
          expect(ignored.map((i) => i.name).sort()).toEqual(
            [...Object.keys(links), ...Object.keys(tools)].sort(),
          );
          const read = new Set([...overrides.map((o) => o.name), ...problems.map((p) => p.message)]);
          for (const setting of settings) {
            expect([...read].some((entry) => entry === setting || entry.endsWith(`(from ${setting})`))).toBe(
              true,
            );
          }
        },
      ),
    );
  });

  it('reads every real setting as a setting, whatever service links sit next to it', () => {
    fc.assert(
      fc.property(settingName, settingValue, (name, value) => {
        // Even with a _SERVICE_HOST for every Service name the setting could be a link of.
        const env = { ...anchorsFor(name), [name]: value };
        const { ignored, problems } = readEnvOverrides(env);
        expect(ignored.map((i) => i.name)).not.toContain(name);
        expect(problems.map((p) => p.path)).not.toContain(`env:${name}`);
      }),
    );
  });

  it('reports a one-character typo of a setting, even next to service links it could be mistaken for', () => {
    fc.assert(
      fc.property(mistypedSetting, settingValue, (typo, value) => {
        const env = { ...kubeletEnv(HEALTH_SERVICE), ...anchorsFor(typo), [typo]: value };
        const { problems, ignored } = readEnvOverrides(env);
        expect(ignored.map((i) => i.name)).not.toContain(typo);
        expect(problems.map((p) => p.path)).toContain(`env:${typo}`);
      }),
      { numRuns: 200 },
    );
  });

  it('takes no one-character typo of any setting for a service link (exhaustive)', () => {
    let typos = 0;
    for (const row of envAddressableRows) {
      const name = envNameForPath(row.path.split('.').map((s) => (s === '<alias>' ? 'src' : s)));
      for (const typo of allTypos(name)) {
        typos += 1;
        // Resolving is slow; only a typo taken for a service link must be shown to be no mistake. The
        // anchors are needed only where the name has no __ (the rest are never links, anchors or not).
        const env = typo.includes('__') ? {} : anchorsFor(typo);
        if (kubernetesServiceLink(typo, '8080', env).kind === 'service-link')
          expect(isMistypedSetting(typo), typo).toBe(false);
      }
    }
    expect(typos).toBeGreaterThan(100_000);
  });

  it.each([
    ['OFFSETSYNC_NATS__SERVRES', /unknown setting SERVRES under nats/],
    ['OFFSETSYNC_LINK', /unknown setting LINK at the top level/],
    ['OFFSETSYNC_PROBES_PORT', /not taken for a Kubernetes service link of Service offsetsync-probes/],
  ])('still reports %s in a pod full of service links', (name, message) => {
    const env = {
      ...kubeletEnv(HEALTH_SERVICE),
      ...kubeletEnv({
        name: 'offsetsync-probes',
        clusterIp: '10.0.0.9',
        ports: [{ port: 1, protocol: 'TCP' }],
      }),
      ...kubeletEnv({ name: 'offsetsync', clusterIp: 'fd00::1', ports: [{ port: 80, protocol: 'UDP' }] }),
    };
    // offsetsync-probes' own OFFSETSYNC_PROBES_PORT is tcp://10.0.0.9:1; a port number there is a typo.
    const { problems } = readEnvOverrides({ ...env, [name]: 'x' });
    expect(problems).toEqual([{ path: `env:${name}`, message: expect.stringMatching(message) as string }]);
  });

  it('lists what it skipped, by name and why, without values', () => {
    const ignored = ignoredEnvVariables({
      OFFSETSYNC_TESTBED_FILE: '/tmp/secret-looking-path',
      OFFSETSYNC_HEALTH_SERVICE_HOST: '10.0.0.1',
      OFFSETSYNC_NATS__SERVERS: 'nats://x:4222',
    });
    expect(ignored).toEqual([
      {
        name: 'OFFSETSYNC_HEALTH_SERVICE_HOST',
        kind: 'kubernetes-service-link',
        about: 'Service offsetsync-health',
      },
      { name: 'OFFSETSYNC_TESTBED_FILE', kind: 'tool', about: TOOL_ENV_VARIABLES.OFFSETSYNC_TESTBED_FILE },
    ]);
  });
});
