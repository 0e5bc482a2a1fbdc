// Guards the deployment files in deploy/: every config file the compose stack mounts and every config file
// the Helm chart renders (each service's and the provision hook Job's) passes the real config schema as its
// pod would load it, each component gets only its own Secrets and reads every secret or certificate file
// from them, credentials named by the chart are real secret settings, and every container runs an existing
// `offsetsync` command.
//
// The chart is checked two ways: by building what each component gets from the values exactly as
// templates/_helpers.tpl does ("offsetsync.serviceConfig", "offsetsync.provisionConfig",
// "offsetsync.secretMounts", "offsetsync.env", "offsetsync.checkComponents"), which the failure cases below
// need; and by rendering the chart with Helm's own engine (helm-java, test/infra/helm-java.ts) and
// comparing the manifests with what the first way built. test/unit/helm-chart.test.ts validates the same
// renders against the Kubernetes schemas.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  describeConfigSchema,
  loadConfig,
  parseDuration,
  resolveEnvName,
  type OffsetSyncConfig,
} from '@offsetsync/runtime';
import { commands } from '../../cli/src/commands/index.js';
import { deploymentNatsUsers } from '../../cli/src/security/nats-authorization.js';
import { chartMinimumKubeVersion, renderChart } from '../infra/helm-java.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const DEPLOY = join(ROOT, 'deploy');
const CHART = join(DEPLOY, 'helm/offsetsync');
const CONFIG_PATH_IN_CONTAINER = '/etc/offsetsync/offsetsync.yaml';
const SERVICE_ROLES = ['collector', 'translator', 'committer', 'health'] as const;
type Role = (typeof SERVICE_ROLES)[number];

type Tree = Record<string, unknown>;

const commandNames = new Set(commands.map((command) => command.name));

/**
 * The workspaces (folders) that `@offsetsync/cli` needs in production: it and, transitively, every
 * workspace package among its `dependencies` (not its devDependencies).
 */
function productionWorkspaces(workspaces: readonly string[]): string[] {
  const folderOf = new Map<string, string>();
  const dependenciesOf = new Map<string, string[]>();
  for (const folder of workspaces) {
    const manifest = JSON.parse(readFileSync(join(ROOT, folder, 'package.json'), 'utf8')) as {
      name: string;
      dependencies?: Record<string, string>;
    };
    folderOf.set(manifest.name, folder);
    dependenciesOf.set(manifest.name, Object.keys(manifest.dependencies ?? {}));
  }
  const needed = new Set<string>();
  const visit = (name: string): void => {
    if (needed.has(name) || !folderOf.has(name)) return;
    needed.add(name);
    for (const dependency of dependenciesOf.get(name) ?? []) visit(dependency);
  };
  visit('@offsetsync/cli');
  return [...needed].map((name) => folderOf.get(name) as string);
}

function isTree(value: unknown): value is Tree {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readYaml(file: string): Tree {
  // compose.yaml shares settings through `<<` merge keys, which Docker Compose applies.
  const value: unknown = parse(readFileSync(file, 'utf8'), { merge: true });
  if (!isTree(value)) throw new Error(`${file} does not hold a mapping`);
  return value;
}

/** Validates a config as a service would load it, with `env` as its environment. */
function validate(config: Tree, env: Record<string, string> = {}): OffsetSyncConfig {
  return loadConfig({ env, overrides: config });
}

function problemsOf(run: () => unknown): string {
  try {
    run();
    return '';
  } catch (e: unknown) {
    const problems = (e as { problems?: { path: string; message: string }[] }).problems;
    return problems ? problems.map((p) => `${p.path}: ${p.message}`).join('\n') : String(e);
  }
}

describe('deploy/compose.yaml', () => {
  const compose = readYaml(join(DEPLOY, 'compose.yaml'));
  const services = compose.services as Record<string, Tree>;
  const offsetsyncServices = Object.entries(services).filter(([, s]) => s.image === 'offsetsync:local');

  it('builds the image with every workspace and ships only what the CLI runs with', () => {
    const dockerfile = readFileSync(join(DEPLOY, 'Dockerfile'), 'utf8');
    const runtimeStage = dockerfile.slice(dockerfile.indexOf(' AS runtime'));
    const workspaces = (
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { workspaces: string[] }
    ).workspaces;
    const production = productionWorkspaces(workspaces);
    expect(production).toContain('cli');
    for (const workspace of workspaces) {
      // Every package.json before npm ci (the lock file names every workspace), every source in the build.
      expect(dockerfile, workspace).toContain(`COPY ${workspace}/package.json ${workspace}/`);
      const sources = [workspace, dirname(workspace)].map((folder) => `COPY ${folder} ${folder}/`);
      expect(
        sources.some((line) => dockerfile.includes(line)),
        `${workspace}: one of ${sources.join(', ')}`,
      ).toBe(true);
      // The runtime stage holds the build of the workspaces the CLI depends on in production, and
      // nothing of the others (the launcher of real servers, the test and benchmark harness).
      if (production.includes(workspace))
        expect(runtimeStage, workspace).toContain(`/app/${workspace}/dist ${workspace}/dist/`);
      else expect(runtimeStage, workspace).not.toContain(`${workspace}/`);
    }
  });

  it('runs each of the four services once, from the image built from deploy/Dockerfile', () => {
    expect(offsetsyncServices.map(([name]) => name).sort()).toEqual([...SERVICE_ROLES].sort());
    for (const [, service] of offsetsyncServices) {
      expect(service.build).toEqual({ context: '..', dockerfile: 'deploy/Dockerfile' });
    }
    expect(existsSync(join(DEPLOY, 'Dockerfile'))).toBe(true);
  });

  for (const role of SERVICE_ROLES) {
    describe(role, () => {
      const service = services[role] ?? {};
      const command = service.command as string[];
      const mount = (service.volumes as string[]).find((v) => v.includes(`:${CONFIG_PATH_IN_CONTAINER}`));
      const hostFile = join(DEPLOY, mount?.split(':')[0] ?? 'missing');

      it('runs an existing offsetsync command with its config file', () => {
        expect(commandNames).toContain(command[0]);
        expect(command).toEqual([role, '--config', CONFIG_PATH_IN_CONTAINER]);
        expect(mount, 'a config file mounted at the --config path').toBeDefined();
        expect(existsSync(hostFile)).toBe(true);
      });

      it('mounts a config file that passes the config schema and has its service section', () => {
        const raw = readYaml(hostFile);
        let config: OffsetSyncConfig | undefined;
        expect(problemsOf(() => (config = validate(raw)))).toBe('');
        expect(problemsOf(() => loadConfig({ file: hostFile, env: {} }))).toBe('');
        expect(config?.[role]).toBeDefined();
        // The published ports are the ones the service listens on.
        const ports = (service.ports as string[]).map((p) => Number(p.split(':')[1]));
        expect(ports).toContain(config?.telemetry.prometheus.port);
        if (role === 'health') expect(ports).toContain(config?.health?.grpc.port);
      });
    });
  }

  it('names only clusters and a NATS server that the stack runs', () => {
    for (const role of SERVICE_ROLES) {
      const mount = (services[role]?.volumes as string[])[0] ?? '';
      const config = readYaml(join(DEPLOY, mount.split(':')[0] ?? ''));
      const clusters = config.clusters as Record<string, { bootstrapServers: string[] }>;
      for (const { bootstrapServers } of Object.values(clusters)) {
        for (const broker of bootstrapServers) expect(Object.keys(services)).toContain(broker.split(':')[0]);
      }
      const nats = (config.nats as { servers: string[] }).servers;
      for (const url of nats) expect(Object.keys(services)).toContain(new URL(url).hostname);
    }
  });
});

/**
 * Merges `overlay` over `base` the way Helm merges a values file over the chart's defaults: maps merge,
 * everything else replaces. "offsetsync.mergeInto" in _helpers.tpl merges the layers of a config file by
 * the same rule.
 */
function helmMerge(base: Tree, overlay: Tree): Tree {
  const merged: Tree = { ...base };
  for (const [key, value] of Object.entries(overlay)) {
    const existing = merged[key];
    merged[key] = isTree(existing) && isTree(value) ? helmMerge(existing, value) : value;
  }
  return merged;
}

/** A role the chart runs: the four services as Deployments, `provision` as the hook Job. */
type ChartRole = Role | 'provision';

interface SecretEnv {
  name: string;
  secretName: string;
  key: string;
}

interface SecretMount {
  secretName: string;
  mountPath: string;
  items?: { key: string; path: string }[];
}

/** One entry of the `components` values. */
interface ComponentValues {
  config?: Tree;
  secretMounts?: SecretMount[];
  secretEnv?: SecretEnv[];
}

interface ChartComponent {
  /**
   * Key in `components`, in the ConfigMap and suffix of the Deployment (or Job) name: `collector-onprem`,
   * `health`, `provision`.
   */
  component: string;
  role: ChartRole;
  config: Tree;
  /** The Secrets its pod mounts, in the template's order: those under components."*", then its own. */
  secretMounts: SecretMount[];
  /** Its container's Secret-backed env vars: the global secretEnv, components."*", then its own. */
  secretEnv: SecretEnv[];
}

const CONFIG_DIR = dirname(CONFIG_PATH_IN_CONTAINER);
const COMPONENT_FIELDS = ['config', 'secretMounts', 'secretEnv'];

function componentEntries(values: Tree): Record<string, ComponentValues | null> {
  return (values.components ?? {}) as Record<string, ComponentValues | null>;
}

function roleValues(values: Tree, role: ChartRole): Tree & { enabled?: boolean; settings?: Tree } {
  return (values[role] ?? {}) as Tree & { enabled?: boolean; settings?: Tree };
}

/** The component names the chart renders, as "offsetsync.componentNames" lists them. */
function componentNames(values: Tree): string[] {
  const names: string[] = [];
  if (roleValues(values, 'collector').enabled === true) {
    for (const alias of roleValues(values, 'collector').clusters as string[])
      names.push(`collector-${alias}`);
  }
  for (const role of ['translator', 'committer'] as const) {
    if (roleValues(values, role).enabled !== true) continue;
    for (const alias of roleValues(values, role).targets as string[]) names.push(`${role}-${alias}`);
  }
  if (roleValues(values, 'health').enabled === true) names.push('health');
  if (roleValues(values, 'provision').enabled === true) names.push('provision');
  return names;
}

/** The Secrets a component's pod mounts ("offsetsync.secretMounts"): those under "*", then its own. */
function secretMountsOf(values: Tree, component: string): SecretMount[] {
  const entries = componentEntries(values);
  return [...(entries['*']?.secretMounts ?? []), ...(entries[component]?.secretMounts ?? [])];
}

/** Throws where "offsetsync.checkComponents" fails the rendering, with the same message. */
function checkComponents(values: Tree): void {
  const names = componentNames(values);
  for (const [key, entry] of Object.entries(componentEntries(values))) {
    if (key !== '*' && !names.includes(key)) {
      throw new Error(
        `components.${key}: no such component; this release renders ${names.join(', ')} ("*" applies to all)`,
      );
    }
    for (const field of Object.keys(entry ?? {})) {
      if (!COMPONENT_FIELDS.includes(field)) {
        throw new Error(
          `components.${key}.${field}: unknown field; a component takes config, secretMounts and secretEnv`,
        );
      }
    }
    (entry?.secretMounts ?? []).forEach((mount, index) => {
      const where = `components.${key}.secretMounts[${index}]`;
      if (!mount.secretName) throw new Error(`${where}: secretName is required`);
      if (!String(mount.mountPath).startsWith('/'))
        throw new Error(`${where}: mountPath must be an absolute path`);
      if (mount.mountPath.replace(/\/$/, '') === CONFIG_DIR || mount.mountPath.startsWith(`${CONFIG_DIR}/`)) {
        throw new Error(
          `${where}: mountPath ${mount.mountPath} lies in the config volume ${CONFIG_DIR}; use another directory, for example /var/run/secrets/offsetsync/<name>`,
        );
      }
    });
  }
  for (const name of names) {
    const seen = new Set<string>();
    for (const mount of secretMountsOf(values, name)) {
      const path = mount.mountPath.replace(/\/$/, '');
      if (seen.has(path)) {
        throw new Error(
          `${name}: two Secrets mounted at ${path} (from components."*" and components.${name})`,
        );
      }
      seen.add(path);
    }
  }
}

/**
 * What the chart renders per component, built the way _helpers.tpl builds it: the config files
 * ("offsetsync.serviceConfig", "offsetsync.provisionConfig"), the Secret mounts and the Secret env vars.
 */
function chartComponents(values: Tree): ChartComponent[] {
  checkComponents(values);
  const entries = componentEntries(values);
  const shared = entries['*'] ?? {};
  const merged = (layers: Tree[]): Tree => layers.reduce((config, layer) => helmMerge(config, layer), {});
  const globalConfig = (values.config as Tree | undefined) ?? {};
  const provisionEnabled = roleValues(values, 'provision').enabled === true;
  const make = (role: ChartRole, component: string, config: Tree): ChartComponent => ({
    component,
    role,
    config,
    secretMounts: secretMountsOf(values, component),
    secretEnv: [
      ...((values.secretEnv ?? []) as SecretEnv[]),
      ...(shared.secretEnv ?? []),
      ...(entries[component]?.secretEnv ?? []),
    ],
  });
  const service = (role: Role, alias: string | undefined): ChartComponent => {
    const component = alias === undefined ? role : `${role}-${alias}`;
    const fixed: Tree =
      role === 'collector' ? { cluster: alias } : role === 'health' ? {} : { target: alias };
    let config = merged([
      globalConfig,
      shared.config ?? {},
      { [role]: roleValues(values, role).settings ?? {} },
      entries[component]?.config ?? {},
      { [role]: fixed, probes: { enabled: true, host: '0.0.0.0', port: (values.probes as Tree).port } },
    ]);
    if (provisionEnabled && !(isTree(config.nats) && 'provisioning' in config.nats)) {
      config = helmMerge(config, { nats: { provisioning: 'verify' } });
    }
    return make(role, component, config);
  };
  const components: ChartComponent[] = [];
  if (roleValues(values, 'collector').enabled === true) {
    for (const alias of roleValues(values, 'collector').clusters as string[])
      components.push(service('collector', alias));
  }
  for (const role of ['translator', 'committer'] as const) {
    if (roleValues(values, role).enabled !== true) continue;
    for (const alias of roleValues(values, role).targets as string[]) components.push(service(role, alias));
  }
  if (roleValues(values, 'health').enabled === true) components.push(service('health', undefined));
  if (provisionEnabled) {
    const committer = roleValues(values, 'committer');
    const targets = (committer.targets ?? []) as string[];
    const settings = committer.settings ?? {};
    const ackWait: Tree =
      committer.enabled === true && targets.length > 0 && 'ackWaitMs' in settings
        ? { committer: { target: targets[0], ackWaitMs: settings.ackWaitMs } }
        : {};
    components.push(
      make(
        'provision',
        'provision',
        merged([globalConfig, shared.config ?? {}, ackWait, entries.provision?.config ?? {}]),
      ),
    );
  }
  return components;
}

/** Every ...File setting of a config tree (a secret or certificate the process reads), as [path, file]. */
function fileSettings(tree: Tree, path: readonly string[] = []): [string, string][] {
  return Object.entries(tree).flatMap(([key, value]): [string, string][] => {
    if (isTree(value)) return fileSettings(value, [...path, key]);
    return key.endsWith('File') && typeof value === 'string' ? [[[...path, key].join('.'), value]] : [];
  });
}

/**
 * The Secret mount a file of the pod comes from: a listed item of it, or, when it lists none, any key of
 * the Secret (a file directly in the mount path).
 */
function mountOf(mounts: readonly SecretMount[], file: string): SecretMount | undefined {
  return mounts.find((mount) => {
    const dir = mount.mountPath.replace(/\/$/, '');
    if (!file.startsWith(`${dir}/`)) return false;
    const name = file.slice(dir.length + 1);
    return mount.items === undefined
      ? name !== '' && !name.includes('/')
      : mount.items.some((item) => item.path === name);
  });
}

const secretRows = describeConfigSchema().filter((row) => row.secret);

/** True when `path` (with a real alias) is a setting the schema marks as a credential. */
function isSecretSetting(path: readonly string[]): boolean {
  return secretRows.some((row) => {
    const pattern = row.path.split('.');
    return pattern.length === path.length && pattern.every((seg, i) => seg === '<alias>' || seg === path[i]);
  });
}

function committerAckWaitDefaultMs(): number {
  const row = describeConfigSchema().find((r) => r.path === 'committer.ackWaitMs');
  const parsed = parseDuration(row?.default);
  if (!parsed.ok) throw new Error(`committer.ackWaitMs has no default duration: ${parsed.message}`);
  return parsed.ms;
}

// The files of a pod's Secret mounts exist there; in this test one stand-in file takes their place, and
// every file outside the component's mounts stays missing, so loadConfig reports it as in the pod.
const scratch = mkdtempSync(join(tmpdir(), 'offsetsync-chart-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const standInFile = join(scratch, 'mounted-secret-file');
writeFileSync(standInFile, 'stand-in\n');

interface PodView {
  /** The config file, each file of the component's Secret mounts replaced by the stand-in. */
  config: Tree;
  env: Record<string, string>;
  /** Every file setting, from the config file and from plain env vars (extraEnv). */
  files: [string, string][];
}

/** The component's config and environment as its container sees them. */
function podView(component: ChartComponent, values: Tree): PodView {
  const inPod = (file: string) => (mountOf(component.secretMounts, file) ? standInFile : file);
  const replace = (tree: Tree): Tree =>
    Object.fromEntries(
      Object.entries(tree).map(([key, value]) => [
        key,
        isTree(value)
          ? replace(value)
          : key.endsWith('File') && typeof value === 'string'
            ? inPod(value)
            : value,
      ]),
    );
  const env: Record<string, string> = {};
  const files = fileSettings(component.config);
  for (const s of component.secretEnv) env[s.name] = `test-${s.secretName}-${s.key}`;
  for (const e of (values.extraEnv ?? []) as { name: string; value?: string }[]) {
    if (e.value === undefined) continue;
    const resolved = resolveEnvName(e.name);
    const isFile = resolved.ok && (resolved.resolved.path.at(-1) ?? '').endsWith('File');
    if (isFile) files.push([e.name, e.value]);
    env[e.name] = isFile ? inPod(e.value) : e.value;
  }
  return { config: replace(component.config), env, files };
}

const defaults = readYaml(join(CHART, 'values.yaml'));
const ciDir = join(CHART, 'ci');
const valueSets: [string, Tree][] = [
  ['values.yaml', defaults],
  ...readdirSync(ciDir)
    .filter((file) => file.endsWith('.yaml'))
    .map((file): [string, Tree] => [`ci/${file}`, helmMerge(defaults, readYaml(join(ciDir, file)))]),
];

describe('deploy/helm/offsetsync', () => {
  for (const [name, values] of valueSets) {
    describe(`with ${name}`, () => {
      const components = chartComponents(values);
      const services = components.filter((c) => c.role !== 'provision');
      const parsed = new Map<string, OffsetSyncConfig>();
      const parsedConfig = (component: ChartComponent): OffsetSyncConfig => {
        const known = parsed.get(component.component);
        if (known) return known;
        const view = podView(component, values);
        const config = validate(view.config, view.env);
        parsed.set(component.component, config);
        return config;
      };

      it('runs every service role, and the provision Job when provision.enabled', () => {
        expect(new Set(services.map((c) => c.role))).toEqual(new Set(SERVICE_ROLES));
        expect(components.some((c) => c.role === 'provision')).toBe(roleValues(values, 'provision').enabled);
      });

      for (const component of components) {
        it(`renders a config for ${component.component} that passes the config schema in its pod`, () => {
          let config: OffsetSyncConfig | undefined;
          expect(problemsOf(() => (config = parsedConfig(component)))).toBe('');
          if (component.role !== 'provision') expect(config?.[component.role]).toBeDefined();
        });
      }

      it('gives each component only its own Secrets and those under "*"', () => {
        const entries = componentEntries(values);
        const sharedMounts = entries['*']?.secretMounts ?? [];
        const sharedEnv = [...((values.secretEnv ?? []) as SecretEnv[]), ...(entries['*']?.secretEnv ?? [])];
        const owners = new Map<string, Set<string>>();
        for (const component of components) {
          const own = entries[component.component] ?? {};
          for (const mount of component.secretMounts) {
            expect([...sharedMounts, ...(own.secretMounts ?? [])], component.component).toContainEqual(mount);
          }
          for (const env of component.secretEnv) {
            expect([...sharedEnv, ...(own.secretEnv ?? [])], component.component).toContainEqual(env);
          }
          // A Secret of one component is no other component's: what is shared is listed under "*".
          const ownSecrets = [...(own.secretMounts ?? []), ...(own.secretEnv ?? [])].map((s) => s.secretName);
          for (const secret of ownSecrets) {
            owners.set(secret, (owners.get(secret) ?? new Set()).add(component.component));
          }
          const names = component.secretEnv.map((e) => e.name);
          expect(new Set(names).size, `${component.component}: an env var listed twice`).toBe(names.length);
        }
        for (const [secret, users] of owners) expect([...users], secret).toHaveLength(1);
      });

      it('reads every secret and certificate file from its own Secret mounts', () => {
        for (const component of components) {
          for (const [setting, file] of podView(component, values).files) {
            expect(
              mountOf(component.secretMounts, file),
              `${component.component}: ${setting} = ${file} is in none of its Secret mounts (${component.secretMounts.map((m) => m.mountPath).join(', ') || 'none'})`,
            ).toBeDefined();
          }
        }
      });

      it('mounts Secrets as files only the non-root user of the pod can read', () => {
        const pod = values.podSecurityContext as Tree;
        const container = values.securityContext as Tree;
        expect(pod).toMatchObject({ runAsNonRoot: true });
        expect(container).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
        // The files are 0440 and owned by root: the user reads them through the group fsGroup gives them.
        if (components.some((c) => c.secretMounts.length > 0)) expect(pod.fsGroup).toBeDefined();
      });

      it('provisions in the provision Job exactly what every service verifies', () => {
        const provision = components.find((c) => c.role === 'provision');
        if (provision === undefined) {
          for (const service of services) expect(parsedConfig(service).nats.provisioning).toBe('create');
          return;
        }
        const provisioned = parsedConfig(provision);
        const ackWaitMs = provisioned.committer?.ackWaitMs ?? committerAckWaitDefaultMs();
        for (const service of services) {
          const config = parsedConfig(service);
          // With create, the service would need JetStream admin rights, which only the Job should hold.
          expect(config.nats.provisioning, `${service.component}: nats.provisioning`).toBe('verify');
          expect(config.links, service.component).toEqual(provisioned.links);
          expect(config.nats.subjectPrefix, service.component).toBe(provisioned.nats.subjectPrefix);
          expect(config.nats.streamReplicas, service.component).toBe(provisioned.nats.streamReplicas);
          if (config.committer) expect(config.committer.ackWaitMs, service.component).toBe(ackWaitMs);
        }
      });

      it('authenticates each component to NATS as its own user of `offsetsync security nats-config`', () => {
        const configs = components.map((c) => [c, parsedConfig(c)] as const);
        const [first] = configs;
        if (first === undefined || configs.every(([, config]) => config.nats.user === undefined)) return;
        const users = deploymentNatsUsers(first[1]);
        const seen = new Set<string>();
        for (const [component, config] of configs) {
          const user = config.nats.user;
          expect(user, `${component.component}: nats.user`).toBeDefined();
          expect(users.find((u) => u.user === user)?.role, `${component.component}: ${user}`).toBe(
            component.role,
          );
          expect(seen.has(user ?? ''), `${user} is shared`).toBe(false);
          seen.add(user ?? '');
        }
      });

      it('keeps each V8 heap limit well inside its memory limit', () => {
        const mib = (quantity: string): number => {
          const match = /^(\d+)(Mi|Gi)$/.exec(quantity);
          expect(match, quantity).not.toBeNull();
          return Number(match?.[1]) * (match?.[2] === 'Gi' ? 1024 : 1);
        };
        for (const role of [...SERVICE_ROLES, 'provision'] as const) {
          const settings = values[role] as { heapMb?: number; resources?: { limits?: { memory?: string } } };
          if (settings.heapMb === undefined) continue;
          const limit = settings.resources?.limits?.memory;
          expect(limit, `${role}: heapMb needs a memory limit`).toBeDefined();
          // The heap is not all of a Node.js process: code, buffers and the young generation come on top.
          expect(settings.heapMb, role).toBeLessThanOrEqual(mib(limit ?? '0Mi') * 0.75);
        }
      });

      it('takes credentials from Secrets only through environment variables naming secret settings', () => {
        for (const component of components) {
          for (const { name: envName } of component.secretEnv) {
            const resolved = resolveEnvName(envName);
            expect(resolved, envName).toMatchObject({ ok: true });
            if (resolved.ok) expect(isSecretSetting(resolved.resolved.path), envName).toBe(true);
          }
          // No credential is written into a ConfigMap.
          expect(JSON.stringify(component.config), component.component).not.toMatch(/"(password|token)"/);
        }
      });
    });
  }

  it('fails the rendering on a components entry that would be ignored or break a pod', () => {
    const render = (components: Tree) => () => chartComponents(helmMerge(defaults, { components }));
    expect(render({ 'translator-clod': { config: {} } })).toThrow(
      'components.translator-clod: no such component; this release renders collector-onprem, translator-cloud, committer-cloud, health, provision',
    );
    expect(render({ health: { secretMount: [] } })).toThrow('components.health.secretMount: unknown field');
    expect(
      render({ health: { secretMounts: [{ secretName: 's', mountPath: '/etc/offsetsync/s' }] } }),
    ).toThrow('lies in the config volume /etc/offsetsync');
    const ca = { secretName: 'ca', mountPath: '/var/run/secrets/offsetsync/ca' };
    expect(
      render({ '*': { secretMounts: [ca] }, health: { secretMounts: [{ ...ca, secretName: 'x' }] } }),
    ).toThrow('health: two Secrets mounted at /var/run/secrets/offsetsync/ca');
  });

  it('lets every service create what it needs when provision is disabled', () => {
    const components = chartComponents(helmMerge(defaults, { provision: { enabled: false } }));
    expect(components.map((c) => c.role)).not.toContain('provision');
    for (const component of components) {
      expect(problemsOf(() => validate(component.config))).toBe('');
      expect(validate(component.config).nats.provisioning, component.component).toBe('create');
    }
  });

  it('keeps a nats.provisioning the values set', () => {
    const values = helmMerge(defaults, {
      components: { health: { config: { nats: { provisioning: 'create' } } } },
    });
    const health = chartComponents(values).find((c) => c.component === 'health');
    expect((health?.config.nats as Tree).provisioning).toBe('create');
  });

  it('has one Deployment template per service, each running an existing offsetsync command', () => {
    const templates = join(CHART, 'templates');
    const roles = readdirSync(templates)
      .filter((file) => file.endsWith('-deployment.yaml'))
      .map((file) => {
        const text = readFileSync(join(templates, file), 'utf8');
        const match = /include "offsetsync\.deployment" \(dict [^)]*"role" "([a-z]+)"/.exec(text);
        expect(match, file).not.toBeNull();
        expect(file).toBe(`${match?.[1]}-deployment.yaml`);
        return match?.[1];
      });
    expect(roles.sort()).toEqual([...SERVICE_ROLES].sort());
    for (const role of roles) expect(commandNames).toContain(role);
    const helpers = readFileSync(join(templates, '_helpers.tpl'), 'utf8');
    expect(helpers).toContain(`args: [{{ .role | quote }}, "--config", "${CONFIG_PATH_IN_CONTAINER}"]`);
  });

  it('runs `offsetsync provision` as a pre-install/pre-upgrade hook Job, after its own hook ConfigMap', () => {
    const templates = join(CHART, 'templates');
    const job = readFileSync(join(templates, 'provision-job.yaml'), 'utf8');
    const configMap = readFileSync(join(templates, 'provision-configmap.yaml'), 'utf8');
    const args = /args: \["([a-z]+)", "--config", "([^"]+)"\]/.exec(job);
    expect(commandNames).toContain(args?.[1]);
    expect(args?.[1]).toBe('provision');
    expect(args?.[2]).toBe(CONFIG_PATH_IN_CONTAINER);
    const annotation = (text: string, key: string) => new RegExp(`${key}: "?([^"\\n]+)"?\\n`).exec(text)?.[1];
    for (const text of [job, configMap]) {
      expect(annotation(text, 'helm\\.sh/hook')).toBe('pre-install,pre-upgrade');
      expect(annotation(text, 'helm\\.sh/hook-delete-policy')).toBe('before-hook-creation,hook-succeeded');
    }
    // On install, hooks run before the release's own resources exist: the Job's config must come from a
    // hook created before it, i.e. of a lower weight.
    expect(Number(annotation(configMap, 'helm\\.sh/hook-weight'))).toBeLessThan(
      Number(annotation(job, 'helm\\.sh/hook-weight')),
    );
    expect(configMap).toContain('name: {{ include "offsetsync.fullname" . }}-provision');
    expect(configMap).toContain('provision.yaml: |');
    expect(configMap).toContain('include "offsetsync.provisionConfig"');
    expect(job).toContain(
      '"configMap" (printf "%s-provision" (include "offsetsync.fullname" .)) "configKey" "provision.yaml"',
    );
    for (const setting of ['backoffLimit', 'activeDeadlineSeconds'])
      expect(job).toContain(`${setting}: {{ .Values.provision.${setting} }}`);
    // The pod security context and the rest every pod shares; helm-chart.test.ts checks the rendered Job.
    expect(job).toContain('include "offsetsync.podSpecCommon" .');
    expect(job).toContain('toYaml .Values.securityContext');
  });
});

interface PodTemplate {
  metadata: Tree;
  spec: {
    containers: (Tree & { args: string[]; env?: { name: string; valueFrom?: Tree }[] })[];
    volumes: (Tree & {
      name: string;
      configMap?: { name: string; items: { key: string }[] };
      secret?: Tree;
    })[];
  };
}

describe('deploy/helm/offsetsync rendered by Helm', () => {
  let renders: Awaited<ReturnType<typeof renderChart>>['renders'] = [];
  beforeAll(async () => {
    const { version } = await chartMinimumKubeVersion(CHART);
    ({ renders } = await renderChart({
      chartDir: CHART,
      renders: valueSets.map(([name]) => ({
        values: name === 'values.yaml' ? '-' : join(CHART, name),
        kubeVersion: version,
      })),
    }));
  }, 180_000);

  valueSets.forEach(([name, values], index) => {
    it(`renders what the test builds, with containers running offsetsync commands (${name})`, () => {
      const render = renders[index];
      expect(render?.error, name).toBeUndefined();
      // Hooks included: the provision Job and its ConfigMap.
      const manifests = (render?.manifests ?? []).map((m) => m.object);
      const componentLabel = (m: Tree) =>
        ((m.metadata as Tree).labels as Tree)['app.kubernetes.io/component'];
      const configMaps = manifests.filter((m) => m.kind === 'ConfigMap');
      const dataOf = (m: Tree | undefined) => (m?.data ?? {}) as Record<string, string>;
      const data = dataOf(configMaps.find((m) => componentLabel(m) === undefined));
      const provisionData = dataOf(configMaps.find((m) => componentLabel(m) === 'provision'));
      const expected = chartComponents(values);
      const byName = new Map(expected.map((c) => [c.component, c]));
      expect(Object.keys(data).sort()).toEqual(
        expected
          .filter((c) => c.role !== 'provision')
          .map((c) => `${c.component}.yaml`)
          .sort(),
      );
      for (const component of expected) {
        const text =
          component.role === 'provision'
            ? provisionData['provision.yaml']
            : data[`${component.component}.yaml`];
        expect(parse(text ?? '') as unknown, component.component).toEqual(component.config);
      }

      const workloads = manifests.filter((m) => m.kind === 'Deployment' || m.kind === 'Job');
      expect(workloads).toHaveLength(expected.length);
      for (const workload of workloads) {
        const pod = (workload.spec as { template: PodTemplate }).template;
        const component = byName.get(componentLabel(workload) as string);
        expect(component, String((workload.metadata as Tree).name)).toBeDefined();
        const container = pod.spec.containers[0];
        const argv = container?.args ?? [];
        expect(commandNames).toContain(argv[0]);
        expect(argv).toEqual([component?.role, '--config', CONFIG_PATH_IN_CONTAINER]);
        // Only the component's own Secrets, as read-only 0440 files and as env vars.
        const secretVolumes = pod.spec.volumes.filter((v) => v.secret !== undefined).map((v) => v.secret);
        expect(secretVolumes).toEqual(
          (component?.secretMounts ?? []).map((m) => ({
            secretName: m.secretName,
            defaultMode: 0o440,
            ...(m.items ? { items: m.items } : {}),
          })),
        );
        // Every mount read-only but /tmp, the emptyDir under the read-only root filesystem.
        const mounts = (container?.volumeMounts ?? []) as { mountPath: string; readOnly?: boolean }[];
        for (const mount of mounts.filter((m) => m.mountPath !== '/tmp'))
          expect(mount.readOnly, mount.mountPath).toBe(true);
        expect(mounts.map((m) => m.mountPath)).toContain('/tmp');
        const secretEnv = (container?.env ?? []).flatMap((e) => {
          const ref = e.valueFrom?.secretKeyRef as { name: string; key: string } | undefined;
          return ref ? [{ name: e.name, secretName: ref.name, key: ref.key }] : [];
        });
        expect(secretEnv).toEqual(component?.secretEnv ?? []);
        if (workload.kind === 'Job') continue;
        const config = component?.config ?? {};
        const probePort = (config.probes as { port: number }).port;
        expect(container?.livenessProbe).toMatchObject({ grpc: { port: probePort } });
        expect(container?.readinessProbe).toMatchObject({ grpc: { port: probePort } });
        const metricsPort =
          ((config.telemetry as Tree | undefined)?.prometheus as { port?: number } | undefined)?.port ?? 9464;
        expect(pod.metadata.annotations).toMatchObject({
          'prometheus.io/scrape': 'true',
          'prometheus.io/port': String(metricsPort),
          'prometheus.io/path': '/metrics',
        });
        const ports = (container?.ports ?? []) as { name: string; containerPort: number }[];
        expect(ports.find((p) => p.name === 'metrics')?.containerPort).toBe(metricsPort);
      }
    });
  });
});
