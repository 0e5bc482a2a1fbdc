// Every metric an alert rule (deploy/helm/offsetsync/files/offsetsync-alerts.rules.yaml) or a panel of the
// dashboard (offsetsync-dashboard.json) reads is one the services really export, under the name the
// OpenTelemetry Prometheus exporter gives it (`_total` on counters, `_bucket`/`_sum`/`_count` on
// histograms): the four services run against the test bed with their Prometheus endpoints on free ports,
// one group's commit goes through, and /metrics of each is scraped. Two counters have series only after
// events a healthy test bed does not make; those are recorded through the services' own counter classes on
// the services' telemetry (startTelemetry with its Prometheus endpoint) and scraped there.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { parse } from 'yaml';
import { startReplicator, startService, type Role } from '@offsetsync/harness';
import { OutcomeCounters as CollectorCounters } from '../../services/collector/src/outcome-counters.js';
import { OutcomeCounters as CommitterCounters } from '../../services/committer/src/outcome-counters.js';
// The services' own telemetry start-up (not exported: services reach it through runServiceMain).
import { startTelemetry } from '../../packages/runtime/src/telemetry/telemetry.js';
import { freePort } from '../infra/free-port.js';
import { REPO_ROOT } from '../infra/testbed.js';
import { waitFor } from '../infra/wait.js';
import { testConfig } from '../support/config.js';
import { connectedAdmin, kafkaClient } from '../support/kafka-clients.js';
import { uniqueName } from '../support/names.js';
import { promqlMetricNames } from '../support/promql-metric-names.js';

const testbed = inject('testbed');
const FILES = join(REPO_ROOT, 'deploy', 'helm', 'offsetsync', 'files');

/**
 * Counters whose series appear only with their first event (the exporter shows no instrument without a
 * data point), which a healthy test bed does not make: an offsets-topic record of a type this build does
 * not know (writing one into __consumer_offsets would break the shared brokers' group coordinator), an
 * application commit racing offsetsync's on the target.
 */
const ONLY_ON_EVENTS = new Set([
  'offsetsync_unknown_offsets_records_total',
  'offsetsync_committer_application_commits_raced_total',
]);

/** Every metric name the rules file and the dashboard read, with where each is read. */
function usedMetrics(): Map<string, string[]> {
  const used = new Map<string, string[]>();
  const note = (expr: string, where: string) => {
    for (const name of promqlMetricNames(expr)) used.set(name, [...(used.get(name) ?? []), where]);
  };
  const rules = parse(readFileSync(join(FILES, 'offsetsync-alerts.rules.yaml'), 'utf8')) as {
    groups: { rules: { alert?: string; record?: string; expr: string }[] }[];
  };
  for (const rule of rules.groups.flatMap((g) => g.rules))
    note(rule.expr, `rule ${rule.alert ?? rule.record}`);
  interface Panel {
    title?: string;
    targets?: { expr?: string }[];
    panels?: Panel[];
  }
  const dashboard = JSON.parse(readFileSync(join(FILES, 'offsetsync-dashboard.json'), 'utf8')) as {
    panels: Panel[];
  };
  const visit = (panel: Panel) => {
    for (const target of panel.targets ?? [])
      if (target.expr !== undefined) note(target.expr, `panel "${panel.title}"`);
    for (const inner of panel.panels ?? []) visit(inner);
  };
  for (const panel of dashboard.panels) visit(panel);
  return used;
}

/** The metric names of the samples of a Prometheus exposition. */
function sampleNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    const sample = /^([A-Za-z_:][A-Za-z0-9_:]*)[{ ]/.exec(line);
    if (sample !== null) names.add(sample[1]!);
  }
  return names;
}

async function scrape(port: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`);
  if (!response.ok) throw new Error(`GET /metrics answered ${response.status}`);
  return response.text();
}

describe('exported metrics', () => {
  it('include every metric the alert rules and the dashboard read', async () => {
    const used = usedMetrics();
    expect(used.size).toBeGreaterThan(0);

    const topic = uniqueName('metrics');
    const group = uniqueName('metrics-app');
    const source = kafkaClient(testbed.source.bootstrapServers);
    const admin = await connectedAdmin(source);
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    const producer = source.producer();
    await producer.connect();
    onTestFinished(() => producer.disconnect());
    await producer.send({
      topic,
      messages: Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: `id:${i}` })),
    });
    const replicator = await startReplicator({ source: testbed.source, target: testbed.target, topic });
    await replicator.waitUntilCaughtUp(60_000);

    const roles: Role[] = ['collector', 'translator', 'committer', 'health'];
    const ports = Object.fromEntries(
      await Promise.all(roles.map(async (r) => [r, await freePort()] as const)),
    );
    const config = testConfig(testbed, {
      collector: { cluster: 'source', groups: { include: [`^${group}$`] }, fetchMaxWaitMs: '20ms' },
      translator: { target: 'target', pendingRetryMinMs: '100ms', pendingRetryMaxMs: '500ms' },
      committer: { target: 'target' },
      health: { grpc: { host: '127.0.0.1', port: await freePort() } },
    });
    await Promise.all(
      roles.map((role) =>
        startService(role, {
          ...config,
          telemetry: { prometheus: { enabled: true, host: '127.0.0.1', port: ports[role] } },
        }),
      ),
    );

    // One commit on the source, applied on the target: outcomes, the end-to-end lag histogram and the
    // link's lag have series from then on.
    await admin.setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '10' }] });
    const scraped = await waitFor(
      'a commit applied on the target, seen in the committer and health metrics',
      async () => {
        const texts = await Promise.all(roles.map((role) => scrape(ports[role]!).catch(() => '')));
        const all = texts.join('\n');
        return /offsetsync_committer_events_total\{[^}]*outcome="applied"/.test(all) &&
          /^offsetsync_link_end_to_end_lag_seconds\{/m.test(all) &&
          /^offsetsync_instance_up\{/m.test(all)
          ? all
          : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    const samples = sampleNames(scraped);

    const missing = [...used]
      .filter(([name]) => !ONLY_ON_EVENTS.has(name) && !samples.has(name))
      .map(([name, where]) => `${name} (${[...new Set(where)].join(', ')})`);
    expect(
      missing,
      `exported: ${[...samples].filter((n) => n.startsWith('offsetsync_')).join(', ')}`,
    ).toEqual([]);
    // The exceptions are real exceptions: the rules and the dashboard use them (checked below).
    for (const name of ONLY_ON_EVENTS) expect(used.has(name), name).toBe(true);
  });

  it("include the counters that have series only after rare events, recorded by the services' own counters", async () => {
    const telemetry = startTelemetry({
      serviceName: 'offsetsync-metrics-test',
      serviceNamespace: 'offsetsync',
      instanceId: uniqueName('metrics'),
      version: '0.0.0',
      prometheus: { host: '127.0.0.1', port: 0 },
    });
    onTestFinished(() => telemetry.shutdown());
    const address = await telemetry.metricsAddress;
    new CollectorCounters(telemetry.meter).addUnknown(9, 0);
    new CommitterCounters(telemetry.meter).applicationCommitSeen('after_commit');
    const samples = sampleNames(await scrape(address!.port));
    for (const name of ONLY_ON_EVENTS) expect([...samples], name).toContain(name);
  });
});
