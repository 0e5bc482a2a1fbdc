// The health service against real services: which sides of a link run (SOURCE_ONLY, TARGET_ONLY,
// HEALTHY, a committer killed), grpc.health.v1 Check and Watch per link, WatchLinks transitions, the same
// answers after a restart; replay-if-moved figures checked against a real consumer on the target and
// through `offsetsync status --json`; one trace per offset sync across the three services.
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { LinkState, Names, PartitionSyncState, ServiceRole, type LinkStatus } from '@offsetsync/contracts';
import { ServingStatus } from '@offsetsync/runtime';
import { startReplicator, startService } from '@offsetsync/harness';
import { freePort } from '../infra/free-port.js';
import { REPO_ROOT } from '../infra/testbed.js';
import { waitFor } from '../infra/wait.js';
import { testConfig } from '../support/config.js';
import { healthClients } from '../support/health-client.js';
import { heartbeats, natsConnection } from '../support/jetstream.js';
import { connectedAdmin, kafkaClient } from '../support/kafka-clients.js';
import { uniqueName } from '../support/names.js';

const testbed = inject('testbed');
const LINK = 'offsetsync.link/source/target';

describe('health', () => {
  it('tells one-sided deployments apart, flags a killed committer and answers the same after a restart', async () => {
    const INTERVAL = 1_000;
    const port = await freePort();
    const address = `127.0.0.1:${port}`;
    const config = testConfig(testbed, {
      heartbeat: { intervalMs: `${INTERVAL}ms` },
      // Nothing is committed on the source here: only the groups of this test would be collected.
      collector: { cluster: 'source', groups: { include: [`^${uniqueName('none')}$`] } },
      translator: { target: 'target' },
      committer: { target: 'target' },
      health: { grpc: { host: '127.0.0.1', port }, missingAfterHeartbeats: 2 },
    });
    const names = new Names(config.nats.subjectPrefix);
    const nc = await natsConnection(testbed.nats.url);
    const jsm = await nc.jetstreamManager();
    let health = await startService('health', config);
    const client = healthClients(address);
    await waitFor(
      'the health API',
      async () =>
        (await client.check('')) === ServingStatus.NOT_SERVING ||
        (await client.check('')) === ServingStatus.SERVING
          ? true
          : undefined,
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    const linkWatch = client.watch(LINK);
    const linksWatch = client.watchLinks();
    const linkState = async (): Promise<LinkStatus | undefined> =>
      (await client.listLinks()).links.find(
        (l) => l.sourceCluster === 'source' && l.targetCluster === 'target',
      );
    const waitForState = (state: LinkState, timeoutMs: number) =>
      waitFor(
        `link ${LinkState[state]}`,
        async () => {
          const link = await linkState();
          return link?.state === state ? link : undefined;
        },
        { timeoutMs, intervalMs: 50 },
      );
    /** Waits until a heartbeat of `role` is in the stream: from then on health may know the instance. */
    const firstHeartbeat = (role: ServiceRole) =>
      waitFor(
        `a ${ServiceRole[role]} heartbeat`,
        async () => ((await heartbeats(jsm, names, role)).length > 0 ? Date.now() : undefined),
        { timeoutMs: 60_000, intervalMs: 50 },
      );

    // Nothing runs: the configured link is DOWN.
    const down = await waitForState(LinkState.LINK_STATE_DOWN, 10_000);
    expect(down.reason).toMatch(/no heartbeat/);
    expect(await client.check(LINK)).toBe(ServingStatus.NOT_SERVING);

    // Only a collector: SOURCE_ONLY within 3 heartbeat intervals of its first heartbeat.
    const probePort = await freePort();
    const collector = await startService('collector', {
      ...config,
      probes: { host: '127.0.0.1', port: probePort },
    });
    let since = await firstHeartbeat(ServiceRole.SERVICE_ROLE_COLLECTOR);
    const sourceOnly = await waitForState(
      LinkState.LINK_STATE_SOURCE_ONLY,
      3 * INTERVAL - (Date.now() - since),
    );
    expect(sourceOnly.reason).toContain(
      'a collector runs for "source", but no translator and no committer runs for "target"',
    );
    expect(await client.check(LINK)).toBe(ServingStatus.NOT_SERVING);
    // The collector process itself is fine: its probe port says SERVING.
    expect(await healthClients(`127.0.0.1:${probePort}`).check('')).toBe(ServingStatus.SERVING);
    await collector.stop();
    await waitForState(LinkState.LINK_STATE_DOWN, 10_000);

    // Only a committer: TARGET_ONLY.
    const committer = await startService('committer', config);
    since = await firstHeartbeat(ServiceRole.SERVICE_ROLE_COMMITTER);
    const targetOnly = await waitForState(
      LinkState.LINK_STATE_TARGET_ONLY,
      3 * INTERVAL - (Date.now() - since),
    );
    expect(targetOnly.reason).toContain('a committer runs for "target", but no collector runs for "source"');
    expect(await client.check(LINK)).toBe(ServingStatus.NOT_SERVING);

    // All of them: HEALTHY and SERVING.
    await Promise.all([startService('collector', config), startService('translator', config)]);
    const healthy = await waitForState(LinkState.LINK_STATE_HEALTHY, 60_000);
    expect(healthy.instances.map((i) => i.role).sort()).toEqual(
      [
        ServiceRole.SERVICE_ROLE_COLLECTOR,
        ServiceRole.SERVICE_ROLE_TRANSLATOR,
        ServiceRole.SERVICE_ROLE_COMMITTER,
      ].sort(),
    );
    expect(await client.check(LINK)).toBe(ServingStatus.SERVING);
    expect(await client.check('')).toBe(ServingStatus.SERVING);

    // kill -9 the committer: flagged within 3 heartbeat intervals.
    const killedAt = Date.now();
    await committer.kill();
    const flagged = await waitFor(
      'the link NOT_SERVING',
      async () => ((await client.check(LINK)) === ServingStatus.NOT_SERVING ? Date.now() : undefined),
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    expect(flagged - killedAt).toBeLessThanOrEqual(3 * INTERVAL);
    const afterKill = await linkState();
    expect(afterKill?.state).toBe(LinkState.LINK_STATE_SOURCE_ONLY);
    expect(afterKill?.reason).toMatch(/no committer runs for "target".*committer .* last heard/);

    // Watch sent each transition of the link once, in order; WatchLinks every state change.
    expect(linkWatch.seen.map((s) => s.status)).toEqual([
      ServingStatus.NOT_SERVING,
      ServingStatus.SERVING,
      ServingStatus.NOT_SERVING,
    ]);
    const states = linksWatch.seen.filter((s) => s.targetCluster === 'target').map((s) => s.state);
    const expected = [
      LinkState.LINK_STATE_DOWN,
      LinkState.LINK_STATE_SOURCE_ONLY,
      LinkState.LINK_STATE_DOWN,
      LinkState.LINK_STATE_TARGET_ONLY,
      LinkState.LINK_STATE_HEALTHY,
      LinkState.LINK_STATE_SOURCE_ONLY,
    ];
    let at = 0;
    for (const state of states) if (state === expected[at]) at += 1;
    expect(at, `WatchLinks sent ${states.map((s) => LinkState[s]).join(', ')}`).toBe(expected.length);

    // A new health process rebuilds its view from JetStream and answers the same.
    const before = {
      link: await client.check(LINK),
      overall: await client.check(''),
      state: afterKill?.state,
    };
    await health.stop();
    health = await startService('health', config);
    await waitFor(
      'the restarted health API',
      async () =>
        (await client.check('offsetsync.v1.OffsetSyncHealth')) === ServingStatus.SERVING ? true : undefined,
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    const after = await linkState();
    expect({ link: await client.check(LINK), overall: await client.check(''), state: after?.state }).toEqual(
      before,
    );
    expect(after?.reason).toMatch(/no committer runs for "target"/);
    expect(await client.check('offsetsync.link/source/elsewhere')).toEqual({ code: 5 }); // NOT_FOUND
  });

  it('reports replay-if-moved figures a real consumer on the target confirms, through `offsetsync status --json`, and one trace per offset sync', async () => {
    const topic = uniqueName('health-replay');
    const group = uniqueName('health-app');
    const traces = await otlpReceiver();
    const port = await freePort();
    const address = `127.0.0.1:${port}`;
    const config = testConfig(testbed, {
      collector: { cluster: 'source', groups: { include: [`^${group}$`] }, fetchMaxWaitMs: '20ms' },
      translator: { target: 'target', pendingRetryMinMs: '100ms', pendingRetryMaxMs: '1s' },
      committer: { target: 'target' },
      health: { grpc: { host: '127.0.0.1', port } },
    });
    const env = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: traces.url, OTEL_BSP_SCHEDULE_DELAY: '200' };
    const prefix = config.nats.subjectPrefix;

    // 200 records on the source; the target holds the first 100, then 10 records of its own, then the
    // other 100: source offset o >= 100 lands at o + 10 on the target.
    const source = kafkaClient(testbed.source.bootstrapServers);
    await (
      await connectedAdmin(source)
    ).createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    const producer = source.producer();
    await producer.connect();
    onTestFinished(() => producer.disconnect());
    await producer.send({
      topic,
      messages: Array.from({ length: 200 }, (_, i) => ({ key: `k${i}`, value: `id:${i}` })),
    });
    const replicator = await startReplicator({
      source: testbed.source,
      target: testbed.target,
      topic,
      copyUntil: { 0: 100 },
    });
    await replicator.waitUntilCaughtUp(60_000);
    const target = kafkaClient(testbed.target.bootstrapServers);
    const targetProducer = target.producer();
    await targetProducer.connect();
    onTestFinished(() => targetProducer.disconnect());
    await targetProducer.send({
      topic,
      messages: Array.from({ length: 10 }, (_, i) => ({ key: 'own', value: `target-only:${i}` })),
    });
    replicator.copyUntil({ 0: 200 });
    await replicator.waitUntilCaughtUp(60_000);

    const [, , committer] = await Promise.all([
      startService('collector', config, { env }),
      startService('translator', config, { env }),
      startService('committer', config, { env }),
      startService('health', config),
    ]);
    const client = healthClients(address);
    const sourceAdmin = await connectedAdmin(source);
    const targetAdmin = await connectedAdmin(target);
    const partitionOf = async (state: PartitionSyncState, sourceOffset: number) =>
      waitFor(
        `partition ${PartitionSyncState[state]} at source offset ${sourceOffset}`,
        async () => {
          const p = (await client.getGroup('source', 'target', group)).partitions[0];
          return p?.state === state && p.sourceOffset === sourceOffset ? p : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 200 },
      );

    // The group commits 50 on the source; the target gets the exact counterpart, 50: nothing to replay.
    await sourceAdmin.setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '50' }] });
    const synced = await partitionOf(PartitionSyncState.PARTITION_SYNC_STATE_SYNCED, 50);
    expect(synced).toMatchObject({ targetOffset: 50, exact: true, lagMs: 0, replayIfMoved: 0 });
    expect(await committedOnTarget(targetAdmin, group, topic)).toBe(50);

    // One trace for that offset sync, on the messaging conventions: the collector's publish, the
    // translator's process of it and its publish of the translation, the committer's process of that.
    const stage = (name: string) => (s: ReceivedSpan) =>
      s.attributes['offsetsync.stage'] === name && s.attributes['offsetsync.group'] === group;
    const chain = await waitFor(
      'one trace across the three services',
      () => {
        const spans = traces.spans();
        const collected = spans.filter(stage('collect'));
        const ids = new Set(collected.map((s) => s.traceId));
        if (ids.size !== 1) return Promise.resolve(undefined);
        const [traceId] = ids;
        const inTrace = spans.filter((s) => s.traceId === traceId);
        const child = (parent: ReceivedSpan | undefined, kind: number) =>
          inTrace.find((s) => parent !== undefined && s.parentSpanId === parent.spanId && s.kind === kind);
        const collect = collected[0];
        const translate = child(collect, SPAN_KIND_CONSUMER);
        const translated = child(translate, SPAN_KIND_PRODUCER);
        const commit = child(translated, SPAN_KIND_CONSUMER);
        return Promise.resolve(
          commit === undefined ? undefined : { collect: collect!, translate, translated, commit },
        );
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    expect(
      Object.values(chain).map((s) => [s!.service, s!.name, s!.attributes['messaging.operation.type']]),
    ).toEqual([
      ['offsetsync-collector', `publish ${prefix}.committed.source.>`, 'send'],
      ['offsetsync-translator', `process ${prefix}.committed.source.>`, 'process'],
      ['offsetsync-translator', `publish ${prefix}.translated.source.target.>`, 'send'],
      ['offsetsync-committer', `process ${prefix}.translated.source.target.>`, 'process'],
    ]);
    for (const s of Object.values(chain)) {
      expect(s!.attributes).toMatchObject({ 'messaging.system.name': 'nats', 'offsetsync.group': group });
      // The subject falls under the filter that names the span (`<filter without '>'><group>.<topic>.0`).
      const filter = String(s!.attributes['messaging.destination.template']);
      expect(s!.name.endsWith(filter)).toBe(true);
      expect(s!.attributes['messaging.destination.name']).toBe(`${filter.slice(0, -1)}${group}.${topic}.0`);
    }
    expect(chain.translate!.attributes['messaging.consumer.group.name']).toBe('translator-source-target');
    expect(chain.commit.attributes['messaging.consumer.group.name']).toBe('committer-source-target');
    expect(chain.collect.attributes['messaging.message.id']).toEqual(expect.any(String));
    expect(chain.translated!.attributes['messaging.message.id']).toEqual(expect.any(String));

    // With the committer gone, the group moves on to 150 on the source; its counterpart on the target is
    // 160, so a consumer moving now would read 110 records again.
    await committer.stop();
    await sourceAdmin.setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '150' }] });
    const pending = await waitFor(
      'the translation of 150',
      async () => {
        const p = await partitionOf(PartitionSyncState.PARTITION_SYNC_STATE_PENDING, 150);
        return p.replayIfMoved >= 0 ? p : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    expect(pending).toMatchObject({ targetOffset: 50, replayIfMoved: 110 });
    expect(pending.reason).toMatch(/waiting for the committer/);

    // `offsetsync status --json` shows the same figures.
    const cli = join(REPO_ROOT, 'cli', 'bin', 'offsetsync.js');
    const { stdout } = await promisify(execFile)(process.execPath, [
      cli,
      'status',
      '--address',
      address,
      '--json',
      '--group',
      group,
    ]);
    const report = JSON.parse(stdout) as { links: { state: string }[]; groups: Record<string, unknown>[] };
    expect(report.links[0]?.state).toBe('SOURCE_ONLY');
    expect(report.groups).toEqual([
      expect.objectContaining({
        group,
        topic,
        partition: 0,
        sourceOffset: 150,
        targetOffset: 50,
        exact: true,
        replayIfMoved: 110,
        state: 'PENDING',
      }),
    ]);

    // A real consumer of the group on the target starts at the committed 50 and reads 110 records before
    // the one the group reads next on the source (id:150).
    expect(await committedOnTarget(targetAdmin, group, topic)).toBe(50);
    expect(await recordsBefore(target, group, topic, 'id:150')).toBe(110);
  });
});

async function committedOnTarget(
  admin: Awaited<ReturnType<typeof connectedAdmin>>,
  group: string,
  topic: string,
): Promise<number> {
  const [offsets] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
  return Number(offsets?.partitions[0]?.offset);
}

/** Consumes as `group` from its committed position and counts the records before the one with `value`. */
async function recordsBefore(
  kafka: ReturnType<typeof kafkaClient>,
  group: string,
  topic: string,
  value: string,
): Promise<number> {
  const consumer = kafka.consumer({ groupId: group });
  await consumer.connect();
  onTestFinished(() => consumer.disconnect());
  await consumer.subscribe({ topic });
  let count = 0;
  const found = new Promise<number>((resolve, reject) => {
    consumer
      .run({
        autoCommit: false,
        eachMessage: ({ message }) => {
          if (message.value?.toString() === value) resolve(count);
          else count += 1;
          return Promise.resolve();
        },
      })
      .catch(reject);
  });
  const result = await found;
  await consumer.disconnect();
  return result;
}

const SPAN_KIND_PRODUCER = 4;
const SPAN_KIND_CONSUMER = 5;

interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  /** OTLP's span kind: 4 PRODUCER, 5 CONSUMER. */
  kind: number;
  attributes: Record<string, unknown>;
}

/** An OTLP/HTTP (JSON) trace receiver on a free port, keeping every span it is sent. */
async function otlpReceiver(): Promise<{ url: string; spans: () => ReceivedSpan[] }> {
  const spans: ReceivedSpan[] = [];
  type Value = { stringValue?: string; intValue?: number | string; boolValue?: boolean };
  type Attr = { key: string; value: Value };
  const plain = (attrs: Attr[] | undefined) =>
    Object.fromEntries(
      (attrs ?? []).map((a) => [a.key, a.value.stringValue ?? a.value.intValue ?? a.value.boolValue]),
    );
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans?: {
          resource?: { attributes?: Attr[] };
          scopeSpans?: {
            spans?: {
              traceId: string;
              spanId: string;
              parentSpanId?: string;
              name: string;
              kind: number;
              attributes?: Attr[];
            }[];
          }[];
        }[];
      };
      for (const rs of body.resourceSpans ?? []) {
        const service = String(plain(rs.resource?.attributes)['service.name']);
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            spans.push({
              service,
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId === '' ? undefined : s.parentSpanId,
              name: s.name,
              kind: s.kind,
              attributes: plain(s.attributes),
            });
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${port}/v1/traces`, spans: () => [...spans] };
}
