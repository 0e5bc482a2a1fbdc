// Fan-out: one source, two targets (a bed of its own with three clusters), each target with its own
// translator and committer, a replicator copying the topic to both while each target holds a different
// number of records of its own first.
// - The failover test's hostile workload (colliding and backward timestamps, a record stamped an hour
//   ahead, transactions, a replicator that writes runs twice and restarts, each target its own way): the
//   group moves to either target with nothing replayed and nothing skipped (judged by record identity),
//   and `status` shows each target's own offsets.
// - The link to `cloud` excludes the groups named `private-*`: such a group goes to `dr` only, is never
//   translated for `cloud` (counted there as excluded) and shows EXCLUDED on that link, while each
//   target's figures in health are its own.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { Names, OffsetTranslated, PartitionSyncState, ServiceRole } from '@offsetsync/contracts';
import { startReplicator, startService } from '@offsetsync/harness';
import { startTestbed, stopTestbed, type TestbedInfo } from '@offsetsync/testbed';
import { freePort } from '../infra/free-port.js';
import { waitFor } from '../infra/wait.js';
import { runCli } from '../support/cli.js';
import { testConfig, type TestConfig } from '../support/config.js';
import { runFailover } from '../support/failover-scenario.js';
import { healthClients } from '../support/health-client.js';
import { heartbeats, lastOnSubject, natsConnection } from '../support/jetstream.js';
import { connectedAdmin, kafkaClient, testAdapter } from '../support/kafka-clients.js';
import { uniqueName } from '../support/names.js';

const RECORDS = 300;
/** Records each target holds of its own before the copies, so every target has other offsets. */
const OWN = { cloud: 10, dr: 25 } as const;
type Target = keyof typeof OWN;
const TARGETS = Object.keys(OWN) as Target[];

/** Creates `topic` with one partition on the cluster of `client` and writes `messages` to it. */
async function topicWith(
  client: ReturnType<typeof kafkaClient>,
  topic: string,
  messages: Array<{ key: string; value: string }>,
): Promise<void> {
  await (
    await connectedAdmin(client)
  ).createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  const producer = client.producer();
  await producer.connect();
  onTestFinished(() => producer.disconnect());
  await producer.send({ topic, messages });
}

let bed: TestbedInfo;
beforeAll(async () => {
  bed = await startTestbed({ clusters: ['source', 'cloud', 'dr'] });
}, 180_000);
afterAll(async () => {
  await stopTestbed(bed);
});

describe('fan-out to two targets', () => {
  it(
    'moves a group exactly to either target under the failover workload; status shows each target apart',
    { timeout: 420_000 },
    async () => {
      const healthPort = await freePort();
      let config: TestConfig | undefined;
      const { moves, group, topic } = await runFailover({
        targets: TARGETS,
        kafka: (cluster) => kafkaClient(bed.clusters[cluster]!.bootstrapServers),
        application: (cluster) => kafkaClient(bed.clusters[cluster]!.bootstrapServers),
        adapter: (cluster) => testAdapter(bed.clusters[cluster]!.bootstrapServers),
        replicatorCluster: (cluster) => bed.clusters[cluster]!,
        serviceConfigs: (sections) => {
          config = testConfig(bed, {
            ...sections,
            links: TARGETS.map((target) => ({ source: 'source', target })),
            health: { grpc: { host: '127.0.0.1', port: healthPort } },
          });
          return { collector: config, translator: config, committer: config };
        },
        nats: () => natsConnection(bed.nats.url),
      });
      expect(moves.map(({ target, replayed, skipped }) => ({ target, replayed, skipped }))).toEqual(
        TARGETS.map((target) => ({ target, replayed: 0, skipped: 0 })),
      );
      // The targets hold different records of their own, so every partition stands elsewhere on each.
      const [cloud, dr] = moves.map((m) => m.targetOffsets);
      cloud!.forEach((offset, p) => expect(offset).not.toBe(dr![p]));

      // status, from health: one row per target and partition, each with its target's own offset.
      await startService('health', config!);
      const rowsOf = async () => {
        const run = await runCli([
          'status',
          '--address',
          `127.0.0.1:${healthPort}`,
          '--json',
          '--group',
          group,
        ]);
        if (run.code !== 0) return undefined;
        const { groups } = JSON.parse(run.stdout) as {
          groups: Array<{
            target: string;
            topic: string;
            partition: number;
            targetOffset: number;
            state: string;
          }>;
        };
        return groups.length === TARGETS.length * cloud!.length && groups.every((g) => g.state === 'SYNCED')
          ? groups
          : undefined;
      };
      const rows = await waitFor(`status rows of ${group} on both targets`, rowsOf, {
        timeoutMs: 60_000,
        intervalMs: 500,
      });
      for (const [i, target] of TARGETS.entries()) {
        const offsets = rows
          .filter((r) => r.target === target && r.topic === topic)
          .sort((a, b) => a.partition - b.partition)
          .map((r) => r.targetOffset);
        expect({ target, offsets }).toEqual({ target, offsets: moves[i]!.targetOffsets });
      }
    },
  );

  it(
    'keeps an excluded group off one target and reports each target apart',
    { timeout: 300_000 },
    async () => {
      const topic = uniqueName('fan-out');
      const shared = uniqueName('app');
      const private_ = uniqueName('private-app');
      const source = kafkaClient(bed.clusters.source!.bootstrapServers);
      await topicWith(
        source,
        topic,
        Array.from({ length: RECORDS }, (_, i) => ({ key: `k${i % 7}`, value: `id:${i}` })),
      );
      for (const target of TARGETS) {
        await topicWith(
          kafkaClient(bed.clusters[target]!.bootstrapServers),
          topic,
          Array.from({ length: OWN[target] }, (_, i) => ({ key: 'own', value: `own:${i}` })),
        );
        const replicator = await startReplicator({
          source: bed.clusters.source!,
          target: bed.clusters[target]!,
          topic,
          createTopic: false,
        });
        onTestFinished(() => replicator.stop());
        await replicator.waitUntilCaughtUp(60_000);
      }

      const healthPort = await freePort();
      const base = testConfig(bed, {
        links: [
          { source: 'source', target: 'cloud', groups: { exclude: ['^private-'] } },
          { source: 'source', target: 'dr' },
        ],
        collector: {
          cluster: 'source',
          groups: { include: [`^(${shared}|${private_})$`] },
          fetchMaxWaitMs: '20ms',
        },
        health: { grpc: { host: '127.0.0.1', port: healthPort } },
      });
      const names = new Names(base.nats.subjectPrefix);
      await startService('collector', base);
      await startService('health', base);
      for (const target of TARGETS) {
        await startService('translator', {
          ...base,
          translator: { target, pendingRetryMinMs: '100ms', pendingRetryMaxMs: '1s' },
        });
        await startService('committer', { ...base, committer: { target } });
      }

      // Both groups commit on the source: the shared one at 120, the private one at 80.
      const sourceAdmin = await connectedAdmin(source);
      await sourceAdmin.setOffsets({ groupId: shared, topic, partitions: [{ partition: 0, offset: '120' }] });
      await sourceAdmin.setOffsets({
        groupId: private_,
        topic,
        partitions: [{ partition: 0, offset: '80' }],
      });

      const committedOn = async (target: Target, group: string) => {
        const admin = await connectedAdmin(kafkaClient(bed.clusters[target]!.bootstrapServers));
        const [t] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
        return Number(t?.partitions[0]?.offset ?? -1);
      };
      // Each target gets the counterpart of 120 on its own log: 120 + its own records.
      for (const target of TARGETS) {
        await waitFor(
          `${shared} on ${target}`,
          async () => ((await committedOn(target, shared)) === 120 + OWN[target] ? true : undefined),
          { timeoutMs: 60_000, intervalMs: 200 },
        );
      }
      await waitFor(
        `${private_} on dr`,
        async () => ((await committedOn('dr', private_)) === 80 + OWN.dr ? true : undefined),
        { timeoutMs: 60_000, intervalMs: 200 },
      );

      // The private group never went to cloud: nothing committed there, no translation on the link, and
      // cloud's translator counted it excluded.
      const nc = await natsConnection(bed.nats.url);
      const jsm = await nc.jetstreamManager();
      const excludedCount = await waitFor(
        "cloud's translator counting the private group excluded",
        async () => {
          const beats = await heartbeats(jsm, names, ServiceRole.SERVICE_ROLE_TRANSLATOR);
          const count =
            beats.find((b) => b.targetCluster === 'cloud')?.progress?.eventsByOutcome.excluded ?? 0;
          return count > 0 ? count : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 250 },
      );
      expect(excludedCount).toBeGreaterThan(0);
      expect(await committedOn('cloud', private_)).toBe(-1);
      const translated = (target: Target, group: string): Promise<OffsetTranslated | undefined> =>
        lastOnSubject(
          jsm,
          names.stream('translated'),
          names.translated('source', target, { group, topic, partition: 0 }),
        ).then((m) => (m === undefined ? undefined : OffsetTranslated.decode(m.data)));
      expect(await translated('cloud', private_)).toBeUndefined();
      expect((await translated('dr', private_))?.targetOffset).toBe(80 + OWN.dr);

      // Health: each target's own figures; the private group EXCLUDED on cloud, naming the filter.
      const client = healthClients(`127.0.0.1:${healthPort}`);
      // waitFor retries a call that fails (health has not seen the group yet) until it answers.
      const partitionOn = (target: Target, group: string, sourceOffset: number, state: PartitionSyncState) =>
        waitFor(
          `${group} ${PartitionSyncState[state]} at ${sourceOffset} on ${target} in health`,
          async () => {
            const p = (await client.getGroup('source', target, group)).partitions[0];
            return p?.sourceOffset === sourceOffset && p.state === state ? p : undefined;
          },
          { timeoutMs: 30_000, intervalMs: 200 },
        );
      const { PARTITION_SYNC_STATE_SYNCED: SYNCED, PARTITION_SYNC_STATE_EXCLUDED: EXCLUDED } =
        PartitionSyncState;
      const rows = {
        cloud: await partitionOn('cloud', shared, 120, SYNCED),
        dr: await partitionOn('dr', shared, 120, SYNCED),
        privateCloud: await partitionOn('cloud', private_, 80, EXCLUDED),
      };
      expect([rows.cloud.targetOffset, rows.dr.targetOffset]).toEqual([120 + OWN.cloud, 120 + OWN.dr]);
      expect([rows.cloud.exact, rows.dr.exact]).toEqual([true, true]);
      expect(rows.privateCloud).toMatchObject({
        reason: 'not sent to this target: the link\'s groups exclude "^private-"',
      });
    },
  );
});
