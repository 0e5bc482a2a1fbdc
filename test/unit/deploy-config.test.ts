// Guards the deployment files in deploy/: every config file the compose stack mounts and every config file
// the Helm chart renders into its ConfigMap passes the real config schema, credentials named by the chart
// are real secret settings, and every container runs an existing `offsetsync` command.
//
// Helm is not a project dependency, so the chart is checked two ways: always, by building the config files
// from the values exactly as templates/_helpers.tpl ("offsetsync.serviceConfig") does; and, when a helm
// binary is found (HELM_BIN, else `helm` on PATH), by rendering the chart with `helm template` and checking
// the manifests themselves.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { describeConfigSchema, loadConfig, resolveEnvName, type OffsetSyncConfig } from '@offsetsync/runtime';
import { commands } from '../../cli/src/commands/index.js';

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

/** Merges a values file over the chart's defaults the way Helm does: maps merge, everything else replaces. */
function helmMerge(base: Tree, overlay: Tree): Tree {
  const merged: Tree = { ...base };
  for (const [key, value] of Object.entries(overlay)) {
    const existing = merged[key];
    merged[key] = isTree(existing) && isTree(value) ? helmMerge(existing, value) : value;
  }
  return merged;
}

interface ChartDeployment {
  /** Key in the ConfigMap and suffix of the Deployment name: `collector-onprem`, `health`. */
  component: string;
  role: Role;
  config: Tree;
}

/** The config files the chart renders, built the way "offsetsync.serviceConfig" in _helpers.tpl builds them. */
function chartDeployments(values: Tree): ChartDeployment[] {
  const section = (role: Role) => (values[role] ?? {}) as Tree & { enabled?: boolean };
  const build = (role: Role, alias: string | undefined): ChartDeployment => {
    const own: Tree = structuredClone((section(role).settings as Tree | undefined) ?? {});
    if (role === 'collector') own.cluster = alias;
    if (role === 'translator' || role === 'committer') own.target = alias;
    const config: Tree = structuredClone((values.config as Tree | undefined) ?? {});
    config[role] = own;
    config.probes = { enabled: true, host: '0.0.0.0', port: (values.probes as Tree).port };
    return { component: alias === undefined ? role : `${role}-${alias}`, role, config };
  };
  const deployments: ChartDeployment[] = [];
  if (section('collector').enabled === true) {
    for (const alias of section('collector').clusters as string[])
      deployments.push(build('collector', alias));
  }
  for (const role of ['translator', 'committer'] as const) {
    if (section(role).enabled !== true) continue;
    for (const alias of section(role).targets as string[]) deployments.push(build(role, alias));
  }
  if (section('health').enabled === true) deployments.push(build('health', undefined));
  return deployments;
}

interface SecretEnv {
  name: string;
  secretName: string;
  key: string;
}

const secretRows = describeConfigSchema().filter((row) => row.secret);

/** True when `path` (with a real alias) is a setting the schema marks as a credential. */
function isSecretSetting(path: readonly string[]): boolean {
  return secretRows.some((row) => {
    const pattern = row.path.split('.');
    return pattern.length === path.length && pattern.every((seg, i) => seg === '<alias>' || seg === path[i]);
  });
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
      const secretEnv = (values.secretEnv ?? []) as SecretEnv[];
      const env = Object.fromEntries(secretEnv.map((s) => [s.name, `test-${s.secretName}-${s.key}`]));
      const deployments = chartDeployments(values);

      it('runs every service role', () => {
        expect(new Set(deployments.map((d) => d.role))).toEqual(new Set(SERVICE_ROLES));
      });

      for (const deployment of deployments) {
        it(`renders a config for ${deployment.component} that passes the config schema`, () => {
          let config: OffsetSyncConfig | undefined;
          expect(problemsOf(() => (config = validate(deployment.config, env)))).toBe('');
          expect(config?.[deployment.role]).toBeDefined();
        });
      }

      it("keeps each service's V8 heap limit well inside its memory limit", () => {
        const mib = (quantity: string): number => {
          const match = /^(\d+)(Mi|Gi)$/.exec(quantity);
          expect(match, quantity).not.toBeNull();
          return Number(match?.[1]) * (match?.[2] === 'Gi' ? 1024 : 1);
        };
        for (const role of SERVICE_ROLES) {
          const service = values[role] as { heapMb?: number; resources?: { limits?: { memory?: string } } };
          if (service.heapMb === undefined) continue;
          const limit = service.resources?.limits?.memory;
          expect(limit, `${role}: heapMb needs a memory limit`).toBeDefined();
          // The heap is not all of a Node.js process: code, buffers and the young generation come on top.
          expect(service.heapMb, role).toBeLessThanOrEqual(mib(limit ?? '0Mi') * 0.75);
        }
      });

      it('takes credentials from Secrets only through environment variables naming secret settings', () => {
        for (const { name: envName } of secretEnv) {
          const resolved = resolveEnvName(envName);
          expect(resolved, envName).toMatchObject({ ok: true });
          if (resolved.ok) expect(isSecretSetting(resolved.resolved.path), envName).toBe(true);
        }
        // No credential is written into the ConfigMap.
        for (const deployment of deployments) {
          const text = JSON.stringify(deployment.config);
          expect(text).not.toMatch(/"(password|token)"/);
        }
      });
    });
  }

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
});

function findHelm(): string | undefined {
  const candidates = [
    process.env.HELM_BIN,
    ...(process.env.PATH ?? '').split(':').map((d) => join(d, 'helm')),
  ];
  return candidates.find((file): file is string => file !== undefined && file !== '' && existsSync(file));
}

const helm = findHelm();

describe.skipIf(helm === undefined)('deploy/helm/offsetsync rendered by helm template', () => {
  for (const [name] of valueSets) {
    it(`renders manifests whose configs validate and whose containers run offsetsync commands (${name})`, () => {
      const args = [
        'template',
        'release',
        CHART,
        ...(name === 'values.yaml' ? [] : ['-f', join(CHART, name)]),
      ];
      const output = execFileSync(helm ?? 'helm', args, { encoding: 'utf8' });
      const manifests = parseAllDocuments(output)
        .map((doc) => doc.toJS() as unknown)
        .filter(isTree);
      const configMap = manifests.find((m) => m.kind === 'ConfigMap');
      const data = (configMap?.data ?? {}) as Record<string, string>;
      const values = name === 'values.yaml' ? defaults : helmMerge(defaults, readYaml(join(CHART, name)));
      const env = Object.fromEntries(((values.secretEnv ?? []) as SecretEnv[]).map((s) => [s.name, 'x']));
      expect(Object.keys(data).sort()).toEqual(
        chartDeployments(values)
          .map((d) => `${d.component}.yaml`)
          .sort(),
      );
      for (const text of Object.values(data))
        expect(problemsOf(() => validate(parse(text) as Tree, env))).toBe('');

      const deployments = manifests.filter((m) => m.kind === 'Deployment');
      expect(deployments).toHaveLength(Object.keys(data).length);
      for (const deployment of deployments) {
        const pod = (deployment.spec as { template: { metadata: Tree; spec: Tree } }).template;
        const container = (pod.spec.containers as Tree[])[0] ?? {};
        const argv = container.args as string[];
        expect(commandNames).toContain(argv[0]);
        const key =
          (pod.spec.volumes as { configMap: { items: { key: string }[] } }[])[0]?.configMap.items[0]?.key ??
          '';
        const config = parse(data[key] ?? '') as Tree;
        expect(config[argv[0] ?? '']).toBeDefined();
        const probePort = (config.probes as { port: number }).port;
        expect(container.livenessProbe).toMatchObject({ grpc: { port: probePort } });
        expect(container.readinessProbe).toMatchObject({ grpc: { port: probePort } });
        const metricsPort = (config.telemetry as { prometheus: { port: number } }).prometheus.port;
        expect(pod.metadata.annotations).toMatchObject({
          'prometheus.io/scrape': 'true',
          'prometheus.io/port': String(metricsPort),
          'prometheus.io/path': '/metrics',
        });
      }
    });
  }
});
