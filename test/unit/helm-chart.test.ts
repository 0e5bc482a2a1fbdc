// deploy/helm/offsetsync rendered by Helm's own engine (helm-java, test/infra/helm-java.ts): `helm lint
// --strict`, then `helm template` with the chart's defaults and each ci/ values file, for the oldest
// Kubernetes the chart's kubeVersion admits. Every manifest is validated against the Kubernetes API schemas
// (kubernetes-models; PrometheusRule and ServiceMonitor against the Prometheus operator's CRD schemas,
// @kubernetes-models/prometheus-operator), strictly: a field those schemas do not know fails, as the API
// server's strict field validation would refuse it. Then what production needs of every pod.
//
// A unit test although it runs Java: it starts no server and reads nothing but the chart, so it needs none
// of the integration project's test bed (Kafka brokers, nats-server); it needs the helm-java jars, which
// `npm run infra -- fetch` puts in the cache (and the first render fetches when they are missing).
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Service } from 'kubernetes-models/v1/Service';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { chartMinimumKubeVersion, renderChart } from '../infra/helm-java.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CHART = join(ROOT, 'deploy/helm/offsetsync');
const TEMPLATES = join(CHART, 'templates');

type Tree = Record<string, unknown>;

interface Validatable {
  validate(): void;
}

/** The model of every kind the chart may render, by apiVersion and kind. */
const MODELS: Record<string, new (data: never) => Validatable> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
};

function schemaErrors(model: Validatable): { instancePath: string; message?: string }[] {
  try {
    model.validate();
    return [];
  } catch (error: unknown) {
    const errors = (error as { errors?: { instancePath: string; message?: string }[] }).errors;
    if (errors === undefined) throw error;
    return errors;
  }
}

// A value no JSON schema type admits (not a string, number, boolean, object, array or null).
const PROBE = Symbol('not a JSON value');

/**
 * The fields of a model that its schema does not know, as JSON pointers. The models' validators (ajv,
 * compiled from the Kubernetes OpenAPI and the operator's CRD schemas) ignore unknown properties, as the
 * schemas allow them; the API server does not (strict field validation, `kubectl apply` warns or fails).
 * So each field in turn is set to a value of no JSON type: a field the schema knows, a property or an
 * entry of a typed map such as labels, fails its type check at that pointer; an unknown one does not.
 * The verdict is the package's schemas', property by property.
 */
function unknownFields(model: Validatable): string[] {
  const unknown: string[] = [];
  const visit = (node: unknown, pointer: string): void => {
    if (Array.isArray(node)) {
      node.forEach((item, index) => visit(item, `${pointer}/${index}`));
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const tree = node as Record<string, unknown>;
    for (const key of Object.keys(tree)) {
      const path = `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
      const value = tree[key];
      tree[key] = PROBE;
      const known = schemaErrors(model).some((error) => error.instancePath === path);
      tree[key] = value;
      if (known) visit(value, path);
      else unknown.push(path);
    }
  };
  visit(model, '');
  return unknown;
}

/** Every schema problem of a manifest: the model's validate() errors, then the fields it does not know. */
function manifestProblems(object: Tree): string[] {
  const Model = MODELS[`${String(object.apiVersion)}/${String(object.kind)}`];
  if (Model === undefined)
    return [`no Kubernetes schema for ${String(object.apiVersion)} ${String(object.kind)}`];
  const model = new Model(structuredClone(object) as never);
  const invalid = schemaErrors(model).map((e) => `${e.instancePath} ${e.message ?? ''}`);
  if (invalid.length > 0) return invalid;
  return unknownFields(model).map((path) => `${path}: unknown field`);
}

// The chart's own constraint: the oldest Kubernetes it admits is the version it is rendered for.
const { constraint: KUBE_CONSTRAINT, version: KUBE_VERSION } = await chartMinimumKubeVersion(CHART);
const [major, minor] = KUBE_VERSION.split('.').map(Number);
const TOO_OLD = `${major}.${(minor ?? 1) - 1}.15`;

const scratch = mkdtempSync(join(tmpdir(), 'offsetsync-helm-chart-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const mistyped = join(scratch, 'mistyped-values.yaml');
writeFileSync(
  mistyped,
  'collector:\n  replicas: two\nmonitoring:\n  serviceMonitor: { enable: true }\nnetworkPolicy:\n  enabeld: true\n',
);

const CI_FILES = readdirSync(join(CHART, 'ci'))
  .filter((file) => file.endsWith('.yaml'))
  .sort();
const VALUE_SETS = ['values.yaml', ...CI_FILES.map((file) => `ci/${file}`)];
const valuesArgument = (name: string) => (name === 'values.yaml' ? '-' : join(CHART, name));

const hasTemplate = (name: string) => existsSync(join(TEMPLATES, name));
const monitoringTemplates = {
  prometheusRule: hasTemplate('prometheusrule.yaml') ? 1 : 0,
  dashboard: hasTemplate('grafana-dashboard.yaml') ? 1 : 0,
};

/**
 * The kinds each values file renders, counted. Service Deployments: collector per source, translator and
 * committer per target, health; a PodDisruptionBudget each; the provision hook Job with its hook ConfigMap
 * beside the release ConfigMap; the health Service.
 */
const EXPECTED_KINDS: Record<string, Record<string, number>> = {
  'values.yaml': { ConfigMap: 2, Service: 1, Deployment: 4, PodDisruptionBudget: 4, Job: 1 },
  'ci/sasl-tls-values.yaml': { ConfigMap: 2, Service: 1, Deployment: 6, PodDisruptionBudget: 6, Job: 1 },
  'ci/secured-values.yaml': { ConfigMap: 2, Service: 1, Deployment: 6, PodDisruptionBudget: 6, Job: 1 },
  // Monitoring on: the metrics Service and the ServiceMonitor, the PrometheusRule and the dashboard's
  // ConfigMap (templates of their own); a NetworkPolicy per component, the Job's included.
  'ci/production-values.yaml': {
    ConfigMap: 2 + monitoringTemplates.dashboard,
    Service: 2,
    Deployment: 4,
    PodDisruptionBudget: 4,
    Job: 1,
    NetworkPolicy: 5,
    ServiceMonitor: 1,
    ...(monitoringTemplates.prometheusRule ? { PrometheusRule: 1 } : {}),
  },
};

type Rendering = Awaited<ReturnType<typeof renderChart>>;
let rendering: Rendering;

beforeAll(async () => {
  rendering = await renderChart({
    chartDir: CHART,
    renders: [
      ...VALUE_SETS.map((name) => ({ values: valuesArgument(name), kubeVersion: KUBE_VERSION })),
      { values: '-', kubeVersion: TOO_OLD },
      { values: mistyped, kubeVersion: KUBE_VERSION },
    ],
    log: (line) => console.log(`[helm-java] ${line}`),
  });
}, 180_000);

function renderOf(values: string) {
  const render = rendering.renders.find((r) => r.values === values);
  if (render === undefined) throw new Error(`no render of ${values}`);
  return render;
}

function manifestsOf(name: string) {
  const render = renderOf(valuesArgument(name));
  expect(render.error, name).toBeUndefined();
  return render.manifests ?? [];
}

const meta = (object: Tree) => (object.metadata ?? {}) as { name?: string; labels?: Record<string, string> };
const podSpecOf = (object: Tree) =>
  ((object.spec as Tree).template as { metadata: Tree; spec: Tree & { containers: Tree[] } }).spec;

describe('deploy/helm/offsetsync rendered by Helm', () => {
  it('passes helm lint --strict', () => {
    expect(rendering.lint.failed, rendering.lint.messages.join('\n')).toBe(false);
    expect(rendering.lint.messages.filter((m) => /\[(ERROR|WARNING)\]/.test(m))).toEqual([]);
  });

  it(`keeps kubeVersion ${KUBE_CONSTRAINT}: Helm refuses to render for Kubernetes ${TOO_OLD}`, () => {
    // gRPC probes are generally available from 1.27.
    expect(KUBE_CONSTRAINT).toBe('>=1.27.0-0');
    const render = rendering.renders.find((r) => r.values === '-' && r.error !== undefined);
    expect(render?.error).toContain(
      `chart requires kubeVersion: ${KUBE_CONSTRAINT} which is incompatible with Kubernetes v${TOO_OLD}`,
    );
  });

  it('refuses mistyped values through values.schema.json', () => {
    const render = renderOf(mistyped);
    expect(render.manifests).toBeUndefined();
    expect(render.error).toContain("at '/collector/replicas': got string, want integer");
    expect(render.error).toContain(
      "at '/monitoring/serviceMonitor': additional properties 'enable' not allowed",
    );
    expect(render.error).toContain("at '/networkPolicy': additional properties 'enabeld' not allowed");
  });

  it('flags a field the Kubernetes schemas do not know (the strict check itself)', () => {
    const deployment = manifestsOf('values.yaml').find((m) => m.object.kind === 'Deployment');
    const planted = structuredClone(deployment?.object ?? {});
    (podSpecOf(planted).securityContext as Tree).runAsNonRot = true;
    expect(manifestProblems(planted)).toEqual([
      '/spec/template/spec/securityContext/runAsNonRot: unknown field',
    ]);
    const wrongType = structuredClone(deployment?.object ?? {});
    (podSpecOf(wrongType).securityContext as Tree).runAsUser = 'node';
    expect(manifestProblems(wrongType).join('\n')).toContain('/spec/template/spec/securityContext/runAsUser');
    // The Prometheus operator's CRD schemas, likewise.
    const monitor = manifestsOf('ci/production-values.yaml').find((m) => m.object.kind === 'ServiceMonitor');
    const plantedMonitor = structuredClone(monitor?.object ?? {});
    ((plantedMonitor.spec as { endpoints: Tree[] }).endpoints[0] ?? {}).scrapeInterval = '30s';
    expect(manifestProblems(plantedMonitor)).toEqual(['/spec/endpoints/0/scrapeInterval: unknown field']);
  });

  for (const name of VALUE_SETS) {
    describe(`with ${name}`, () => {
      it('renders the expected kinds', () => {
        const counts: Record<string, number> = {};
        for (const { object } of manifestsOf(name)) {
          const kind = String(object.kind);
          counts[kind] = (counts[kind] ?? 0) + 1;
        }
        expect(counts).toEqual(EXPECTED_KINDS[name]);
      });

      it('renders the provision Job and its ConfigMap as the only hooks, ConfigMap first', () => {
        const hooks = manifestsOf(name)
          .filter((m) => m.hook)
          .map(({ object }) => {
            const annotations = (object.metadata as { annotations: Record<string, string> }).annotations;
            return [
              object.kind,
              meta(object).name,
              annotations['helm.sh/hook'],
              annotations['helm.sh/hook-weight'],
            ];
          });
        expect(hooks).toEqual([
          ['ConfigMap', 'offsetsync-provision', 'pre-install,pre-upgrade', '-10'],
          ['Job', 'offsetsync-provision', 'pre-install,pre-upgrade', '0'],
        ]);
      });

      it('renders only manifests valid against the Kubernetes and Prometheus operator schemas', () => {
        const manifests = manifestsOf(name);
        expect(manifests.length).toBeGreaterThan(0);
        const problems = manifests.flatMap(({ object, source }) =>
          manifestProblems(object).map((p) => `${source} ${String(object.kind)} ${meta(object).name}: ${p}`),
        );
        expect(problems).toEqual([]);
      });

      it('runs every pod non-root, read-only, without privileges, service links or API token', () => {
        const workloads = manifestsOf(name).filter((m) =>
          ['Deployment', 'Job'].includes(String(m.object.kind)),
        );
        expect(workloads.length).toBeGreaterThan(0);
        for (const { object } of workloads) {
          const where = `${String(object.kind)} ${meta(object).name}`;
          const pod = podSpecOf(object);
          expect(pod.enableServiceLinks, where).toBe(false);
          expect(pod.automountServiceAccountToken, where).toBe(false);
          expect(pod.securityContext, where).toMatchObject({
            runAsNonRoot: true,
            runAsUser: 1000,
            runAsGroup: 1000,
            seccompProfile: { type: 'RuntimeDefault' },
          });
          const tmp = (pod.volumes as { name: string; emptyDir?: Tree }[]).find((v) => v.name === 'tmp');
          expect(tmp?.emptyDir, `${where}: an emptyDir for /tmp`).toBeDefined();
          for (const container of pod.containers) {
            expect(container.securityContext, where).toEqual({
              allowPrivilegeEscalation: false,
              readOnlyRootFilesystem: true,
              capabilities: { drop: ['ALL'] },
            });
            expect(container.volumeMounts, where).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
          }
        }
      });

      it('spreads every Deployment over zones and covers it with a PodDisruptionBudget', () => {
        const manifests = manifestsOf(name).map((m) => m.object);
        const values = helmValues(name);
        const budgets = manifests.filter((m) => m.kind === 'PodDisruptionBudget');
        for (const deployment of manifests.filter((m) => m.kind === 'Deployment')) {
          const where = meta(deployment).name;
          const selector = (deployment.spec as { selector: Tree }).selector;
          expect(podSpecOf(deployment).topologySpreadConstraints, where).toEqual([
            {
              maxSkew: 1,
              topologyKey: 'topology.kubernetes.io/zone',
              whenUnsatisfiable: values.topologySpread?.whenUnsatisfiable ?? 'ScheduleAnyway',
              labelSelector: selector,
              matchLabelKeys: ['pod-template-hash'],
            },
          ]);
          const covering = budgets.filter(
            (b) => JSON.stringify((b.spec as Tree).selector) === JSON.stringify(selector),
          );
          expect(covering, `${where}: one PodDisruptionBudget with its selector`).toHaveLength(1);
        }
      });

      it('exposes a named metrics port on every service pod, which the ServiceMonitor scrapes', () => {
        const manifests = manifestsOf(name).map((m) => m.object);
        const deployments = manifests.filter((m) => m.kind === 'Deployment');
        for (const deployment of deployments) {
          const ports = (podSpecOf(deployment).containers[0]?.ports ?? []) as { name: string }[];
          expect(
            ports.map((p) => p.name),
            meta(deployment).name,
          ).toContain('metrics');
        }
        const monitor = manifests.find((m) => m.kind === 'ServiceMonitor');
        if (monitor === undefined) return;
        const spec = monitor.spec as { selector: { matchLabels: Tree }; endpoints: { port: string }[] };
        const services = manifests.filter(
          (m) =>
            m.kind === 'Service' &&
            Object.entries(spec.selector.matchLabels).every(([k, v]) => meta(m).labels?.[k] === v),
        );
        expect(services, 'one Service the ServiceMonitor selects').toHaveLength(1);
        const service = services[0]?.spec as {
          selector: Tree;
          ports: { name: string; targetPort: string }[];
        };
        expect(service.ports.map((p) => p.name)).toEqual(spec.endpoints.map((e) => e.port));
        // The Service's endpoints are exactly the service pods (not the provision Job's), each with the
        // port it targets.
        for (const workload of manifests.filter((m) => m.kind === 'Deployment' || m.kind === 'Job')) {
          const labels = (((workload.spec as Tree).template as Tree).metadata as Tree).labels as Tree;
          const selected = Object.entries(service.selector).every(([k, v]) => labels[k] === v);
          expect(selected, meta(workload).name).toBe(workload.kind === 'Deployment');
        }
      });

      it('restricts each component to its own ports when networkPolicy.enabled', () => {
        const manifests = manifestsOf(name).map((m) => m.object);
        const policies = manifests.filter((m) => m.kind === 'NetworkPolicy');
        const values = helmValues(name);
        if (values.networkPolicy?.enabled !== true) {
          expect(policies).toEqual([]);
          return;
        }
        const workloads = manifests.filter((m) => m.kind === 'Deployment' || m.kind === 'Job');
        expect(policies).toHaveLength(workloads.length);
        for (const workload of workloads) {
          const labels = (((workload.spec as Tree).template as Tree).metadata as Tree).labels as Tree;
          const component = String(labels['app.kubernetes.io/component']);
          const role = String(labels['offsetsync.io/role']);
          const policy = policies.find((p) => meta(p).labels?.['app.kubernetes.io/component'] === component);
          const spec = policy?.spec as {
            podSelector: { matchLabels: Tree };
            ingress: { ports: { port: number }[] }[];
            egress: { ports: { port: number; protocol: string }[] }[];
          };
          expect(spec, component).toBeDefined();
          expect(Object.entries(spec.podSelector.matchLabels).every(([k, v]) => labels[k] === v)).toBe(true);
          const containerPorts = Object.fromEntries(
            (
              (podSpecOf(workload).containers[0]?.ports ?? []) as { name: string; containerPort: number }[]
            ).map((p) => [p.name, p.containerPort]),
          );
          // Ingress: the metrics port and health's gRPC API, never the probe port.
          const ingress = spec.ingress.flatMap((rule) => rule.ports.map((p) => p.port)).sort();
          const expectedIngress = [containerPorts.metrics, containerPorts.grpc].filter(
            (p) => p !== undefined,
          );
          expect(ingress, component).toEqual(expectedIngress.sort());
          const egress = spec.egress.map((rule) => rule.ports.map((p) => `${p.port}/${p.protocol}`));
          expect(egress[0], `${component}: DNS`).toEqual(['53/UDP', '53/TCP']);
          const hasKafka = ['collector', 'translator', 'committer'].includes(role);
          expect(egress.length, `${component}: DNS, NATS${hasKafka ? ', Kafka' : ''}`).toBe(hasKafka ? 3 : 2);
        }
      });
    });
  }
});

/** The values of a set as Helm sees them, for the few the assertions read (only ci files override them). */
function helmValues(name: string): {
  topologySpread?: { whenUnsatisfiable?: string };
  networkPolicy?: { enabled?: boolean };
} {
  const read = (file: string) => parse(readFileSync(join(CHART, file), 'utf8')) as Tree;
  const defaults = read('values.yaml');
  const overlay = name === 'values.yaml' ? {} : read(name);
  const pick = (key: string) => ({ ...(defaults[key] as Tree), ...(overlay[key] as Tree | undefined) });
  return { topologySpread: pick('topologySpread'), networkPolicy: pick('networkPolicy') };
}
