// A target added to a running system, and a link removed from it (a bed of its own: source, cloud, dr).
// The system runs source -> cloud with groups already committed; then a translator and committer for
// dr start with the link source -> dr, and health's config gains the link (read again while it runs).
// Every existing group partition becomes exact on dr from the streams' current state: the collector
// reads nothing more from the source's offsets topic for it (its count of records does not move). Then
// the link is removed from health's config and its services stop: it disappears from ListLinks and
// `status` without restarting health.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { Names, ServiceRole } from '@offsetsync/contracts';
import { startReplicator, startService } from '@offsetsync/harness';
import { startTestbed, stopTestbed, type TestbedInfo } from '@offsetsync/testbed';
import { freePort } from '../infra/free-port.js';
import { waitFor } from '../infra/wait.js';
import { runCli } from '../support/cli.js';
import { testConfig } from '../support/config.js';
import { healthClients } from '../support/health-client.js';
import { heartbeats, natsConnection } from '../support/jetstream.js';
import { connectedAdmin, kafkaClient } from '../support/kafka-clients.js';
import { uniqueName } from '../support/names.js';

const PARTITIONS = 2;
const RECORDS = 200;
/** Records each target holds of its own first, so each has offsets of its own. */
const OWN = { cloud: 10, dr: 40 } as const;
type Target = keyof typeof OWN;
const GROUPS = 4;

let bed: TestbedInfo;
beforeAll(async () => {
  bed = await startTestbed({ clusters: ['source', 'cloud', 'dr'] });
}, 180_000);
afterAll(async () => {
  await stopTestbed(bed);
});

describe('a target added to a running system', () => {
  it(
    'gets every existing group partition exactly without the collector reading anything again, and disappears from status once removed',
    { timeout: 300_000 },
    async () => {
      const topic = uniqueName('added');
      const client = (alias: string) => kafkaClient(bed.clusters[alias]!.bootstrapServers);
      const write = async (alias: string, count: number, value: (i: number) => string) => {
        const producer = client(alias).producer();
        await producer.connect();
        for (let p = 0; p < PARTITIONS; p++) {
          await producer.send({
            topic,
            messages: Array.from({ length: count }, (_, i) => ({ partition: p, value: value(i) })),
          });
        }
        await producer.disconnect();
      };
      for (const alias of ['source', 'cloud', 'dr']) {
        await (
          await connectedAdmin(client(alias))
        ).createTopics({ topics: [{ topic, numPartitions: PARTITIONS }], waitForLeaders: true });
      }
      await write('source', RECORDS, (i) => `id:${i}`);
      for (const target of Object.keys(OWN) as Target[]) {
        await write(target, OWN[target], (i) => `own:${i}`);
        const replicator = await startReplicator({
          source: bed.clusters.source!,
          target: bed.clusters[target]!,
          topic,
          createTopic: false,
        });
        await replicator.waitUntilCaughtUp(60_000);
        // Nothing more to copy; stopped so that nothing else touches the clusters.
        await replicator.stop();
      }

      const groups = Array.from({ length: GROUPS }, () => uniqueName('added-app'));
      /** Where group g committed partition p on the source. */
      const offset = (g: number, p: number) => 20 + 30 * g + 7 * p;
      const healthPort = await freePort();
      const cloudLink = { source: 'source', target: 'cloud' };
      const drLink = { source: 'source', target: 'dr' };
      const base = testConfig(bed, {
        links: [cloudLink],
        heartbeat: { intervalMs: '500ms' },
        collector: {
          cluster: 'source',
          groups: { include: [`^(${groups.join('|')})$`] },
          fetchMaxWaitMs: '20ms',
        },
        health: {
          grpc: { host: '127.0.0.1', port: healthPort },
          configReloadIntervalMs: '500ms',
          forgetLinkAfterMs: '3s',
        },
      });
      const names = new Names(base.nats.subjectPrefix);
      await startService('collector', base);
      const health = await startService('health', base);
      const serve = (target: Target, config: typeof base) =>
        Promise.all([
          startService('translator', { ...config, translator: { target, pendingRetryMinMs: '100ms' } }),
          startService('committer', { ...config, committer: { target } }),
        ]);
      await serve('cloud', base);

      const sourceAdmin = await connectedAdmin(client('source'));
      for (const [g, groupId] of groups.entries()) {
        await sourceAdmin.setOffsets({
          groupId,
          topic,
          partitions: Array.from({ length: PARTITIONS }, (_, p) => ({
            partition: p,
            offset: String(offset(g, p)),
          })),
        });
      }
      const exactOn = async (target: Target) => {
        const admin = await connectedAdmin(client(target));
        for (const [g, groupId] of groups.entries()) {
          const [t] = await admin.fetchOffsets({ groupId, topics: [topic] });
          for (let p = 0; p < PARTITIONS; p++) {
            const got = Number(t?.partitions.find((x) => x.partition === p)?.offset ?? -1);
            if (got !== offset(g, p) + OWN[target]) return undefined;
          }
        }
        return true;
      };
      await waitFor('every group partition exact on cloud', () => exactOn('cloud'), {
        timeoutMs: 60_000,
        intervalMs: 200,
      });

      // What the collector has read of the offsets topic so far, by its own count in its heartbeat.
      const nc = await natsConnection(bed.nats.url);
      const jsm = await nc.jetstreamManager();
      const collectorRead = async (): Promise<Record<string, number>> => {
        const beat = (await heartbeats(jsm, names, ServiceRole.SERVICE_ROLE_COLLECTOR))[0];
        return beat?.progress?.eventsByOutcome ?? {};
      };
      const readBefore = await waitFor(
        'the collector counting every commit',
        async () => {
          const beat = (await heartbeats(jsm, names, ServiceRole.SERVICE_ROLE_COLLECTOR))[0];
          return (beat?.progress?.eventsByOutcome.committed ?? 0) >= GROUPS * PARTITIONS
            ? collectorRead()
            : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 250 },
      );

      // dr joins: its services start with the new link, and health's config gains it (read again).
      const withDr = { ...base, links: [cloudLink, drLink] };
      const healthConfigFile = join(health.dir, 'config.yaml');
      await writeFile(
        healthConfigFile,
        stringify({ ...(parse(await readFile(healthConfigFile, 'utf8')) as object), links: withDr.links }),
      );
      const joined = Date.now();
      const [drTranslator, drCommitter] = await serve('dr', withDr);
      await waitFor('every group partition exact on dr', () => exactOn('dr'), {
        timeoutMs: 60_000,
        intervalMs: 100,
      });
      console.log(
        `[target-added] ${GROUPS * PARTITIONS} group partitions exact on dr ${Date.now() - joined} ms after its services were started`,
      );
      // Wait a few heartbeats: the collector's count stays where it was (nothing read again for dr).
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const readAfter = await collectorRead();
      console.log(
        `[target-added] offsets-topic records the collector handled, by outcome: ${JSON.stringify(readBefore)} before dr joined, ${JSON.stringify(readAfter)} after`,
      );
      // Re-reading the topic for dr would count its commits again: the commits read stay the same.
      // (Group metadata of running consumer groups, its own among them, may come and go meanwhile.)
      expect({ committed: readAfter.committed, deleted: readAfter.deleted }).toEqual({
        committed: readBefore.committed,
        deleted: readBefore.deleted,
      });

      const api = healthClients(`127.0.0.1:${healthPort}`);
      const linkNames = async () =>
        (await api.listLinks()).links.map((l) => `${l.sourceCluster} -> ${l.targetCluster}`);
      expect(await linkNames()).toEqual(['source -> cloud', 'source -> dr']);

      // dr leaves: removed from health's config, its services stopped. Gone from health without a restart.
      await writeFile(
        healthConfigFile,
        stringify({ ...(parse(await readFile(healthConfigFile, 'utf8')) as object), links: [cloudLink] }),
      );
      await Promise.all([drTranslator.stop(), drCommitter.stop()]);
      await waitFor(
        'source -> dr gone from ListLinks',
        async () => ((await linkNames()).includes('source -> dr') ? undefined : true),
        { timeoutMs: 30_000, intervalMs: 250 },
      );
      expect(await linkNames()).toEqual(['source -> cloud']);
      expect(health.running()).toBe(true);
      const status = await runCli(['status', '--address', `127.0.0.1:${healthPort}`, '--no-groups']);
      expect(status.stdout).toContain('source -> cloud');
      expect(status.stdout).not.toContain('source -> dr');
    },
  );
});
