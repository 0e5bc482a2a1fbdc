// A mesh: three clusters a, b and c, each linked to the other two (six links), every service a process.
// The topic's home is a, written with the failover test's hostile workload (colliding and backward
// timestamps, a record stamped an hour ahead, a committed and an aborted transaction); a replicator copies
// it to b and to c (identity names, from the home only, each copy at least once with runs written twice
// and restarts of its own), so records never loop. A group moves a -> b -> c -> a: every move
// starts from the first record it had not consumed (judged by record identity), each cluster keeps the
// application's own commits while the group runs there, and no collector emits an event of a commit
// offsetsync made (no echo): the last commit each collector passed on is the application's own.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { KafkaAdapter } from '@offsetsync/kafka';
import { Names, OffsetCommitted, parseCommitMetadata, ServiceRole } from '@offsetsync/contracts';
import { readPartition, startReplicator, startService } from '@offsetsync/harness';
import { startTestbed, stopTestbed, type TestbedInfo } from '@offsetsync/testbed';
import { waitFor } from '../infra/wait.js';
import { testConfig } from '../support/config.js';
import { writeHostileWorkload } from '../support/failover-scenario.js';
import { heartbeats, lastOnSubject, natsConnection } from '../support/jetstream.js';
import { connectedAdmin, kafkaClient, testAdapter } from '../support/kafka-clients.js';
import { uniqueName } from '../support/names.js';

const CLUSTERS = ['a', 'b', 'c'] as const;
type Cluster = (typeof CLUSTERS)[number];
const PARTITIONS = 3;
const PER_PARTITION = 1_000;
/** Records the group reads per partition on each visit before it moves on. */
const PER_VISIT = 150;

let bed: TestbedInfo;
beforeAll(async () => {
  bed = await startTestbed({ clusters: [...CLUSTERS] });
}, 180_000);
afterAll(async () => {
  await stopTestbed(bed);
});

/**
 * Consumes `count` records per partition from the group's committed position (the beginning without
 * one), commits after them, and returns the values read per partition. `count` undefined: to the end.
 */
async function visit(
  cluster: Cluster,
  group: string,
  topic: string,
  count: number | undefined,
): Promise<Map<number, string[]>> {
  const consumer = kafkaClient(bed.clusters[cluster]!.bootstrapServers).consumer({ groupId: group });
  await consumer.connect();
  onTestFinished(() => consumer.disconnect());
  await consumer.subscribe({ topic, fromBeginning: true });
  const ends = new Map(
    (
      await (
        await connectedAdmin(kafkaClient(bed.clusters[cluster]!.bootstrapServers))
      ).fetchTopicOffsets(topic)
    ).map((p) => [p.partition, Number(p.high)] as const),
  );
  const read = new Map<number, string[]>();
  const done = new Set<number>();
  await new Promise<void>((resolve, reject) => {
    consumer
      .run({
        autoCommit: false,
        eachMessage: async ({ partition, message }) => {
          if (done.has(partition)) return;
          const values = read.get(partition) ?? [];
          values.push(message.value?.toString() ?? '');
          read.set(partition, values);
          const finished =
            count === undefined
              ? Number(message.offset) + 1 === ends.get(partition)
              : values.length === count;
          if (!finished) return;
          done.add(partition);
          await consumer.commitOffsets([{ topic, partition, offset: String(Number(message.offset) + 1) }]);
          if (done.size === PARTITIONS) resolve();
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();
  return read;
}

describe('mesh of three clusters', () => {
  it(
    'moves a group a -> b -> c -> a with 0 replayed and 0 skipped, keeps the application commits and echoes nothing',
    { timeout: 420_000 },
    async () => {
      const topic = uniqueName('mesh');
      const group = uniqueName('mesh-app');
      await writeHostileWorkload(kafkaClient(bed.clusters.a!.bootstrapServers), topic, {
        partitions: PARTITIONS,
        perPartition: PER_PARTITION,
      });
      const adapters = Object.fromEntries(
        CLUSTERS.map((c) => [c, testAdapter(bed.clusters[c]!.bootstrapServers)]),
      ) as Record<Cluster, KafkaAdapter>;
      // The home's data records per partition (as a read-committed consumer sees them), by value.
      const homeData = await Promise.all(
        Array.from({ length: PARTITIONS }, (_, p) => readPartition(adapters.a, topic, p)),
      );
      const homeOffsetOf = homeData.map(
        (records) => new Map(records.map((r) => [r.value!.toString(), r.offset] as const)),
      );
      // From the home only: b and c each hold a copy of a's topic, at least once, each in its own way.
      const copyTo = (target: 'b' | 'c', seed: number) =>
        startReplicator({
          source: bed.clusters.a!,
          target: bed.clusters[target]!,
          topic,
          maxBatchRecords: 200,
          duplicates: { probability: 0.3, seed, maxRunLength: 200, restartProbability: 0.05 },
        });
      const copies = { b: await copyTo('b', 3), c: await copyTo('c', 11) };
      await Promise.all([copies.b.waitUntilCaughtUp(60_000), copies.c.waitUntilCaughtUp(60_000)]);

      const links = CLUSTERS.flatMap((source) =>
        CLUSTERS.filter((target) => target !== source).map((target) => ({ source, target })),
      );
      const config = testConfig(bed, {
        links,
      });
      const names = new Names(config.nats.subjectPrefix);
      const groups = { include: [`^${group}$`] };
      // One collector per cluster, one translator and one committer per target (each serving two links).
      await Promise.all(
        CLUSTERS.flatMap((cluster) => [
          startService('collector', { ...config, collector: { cluster, groups, fetchMaxWaitMs: '20ms' } }),
          startService('translator', {
            ...config,
            translator: { target: cluster, pendingRetryMinMs: '100ms' },
          }),
          startService('committer', { ...config, committer: { target: cluster } }),
        ]),
      );
      const positions = async (cluster: Cluster) =>
        new Map((await adapters[cluster].fetchCommittedOffsets(group, [topic])).map((c) => [c.partition, c]));
      /**
       * Whether `cluster` holds, per partition, a position between home record `last[p]` (the last one
       * consumed) and the next data record: right after `last` (after its last copy) or at the next
       * record (a copy of it). Only a sign that offsetsync synced the position; the reads below judge it.
       */
      const positionedAt = async (cluster: Cluster, last: Map<number, number>) => {
        const now = await positions(cluster);
        for (let p = 0; p < PARTITIONS; p++) {
          const offset = now.get(p)?.offset;
          const consumed = last.get(p)!;
          const next = homeData[p]!.find((r) => r.offset > consumed)!.offset;
          const expected =
            cluster === 'a'
              ? [consumed + 1, next]
              : [
                  Math.max(...copies[cluster].targetOffsetsOf(p, consumed)) + 1,
                  ...copies[cluster].targetOffsetsOf(p, next),
                ];
          if (offset === undefined || !expected.includes(offset)) return undefined;
        }
        return true;
      };
      /** The home offset of the last record read per partition. */
      const lastRead = (read: Map<number, string[]>) =>
        new Map([...read].map(([p, values]) => [p, homeOffsetOf[p]!.get(values.at(-1)!)!] as const));
      /** The application's commits on `cluster` stay while the group runs there. */
      const keptOn = async (cluster: Cluster, before: Awaited<ReturnType<typeof positions>>) => {
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        const now = await positions(cluster);
        for (const [p, c] of before) {
          expect(now.get(p)?.offset).toBe(c.offset);
          expect(parseCommitMetadata(now.get(p)?.metadata)).toBeUndefined();
        }
      };

      const reads: Array<{ cluster: Cluster; read: Map<number, string[]> }> = [];
      const lastAppCommit = new Map<Cluster, Map<number, number>>();
      let previous: Cluster = 'a';
      for (const cluster of ['a', 'b', 'c'] as const) {
        if (cluster !== 'a') {
          const last = lastRead(reads.at(-1)!.read);
          // offsetsync put the group on every other cluster where it stopped on the previous one.
          for (const other of CLUSTERS.filter((c) => c !== previous))
            await waitFor(
              `the group on ${other} after its visit to ${previous}`,
              () => positionedAt(other, last),
              {
                timeoutMs: 60_000,
                intervalMs: 100,
              },
            );
        }
        const read = await visit(cluster, group, topic, PER_VISIT);
        reads.push({ cluster, read });
        const own = await positions(cluster);
        lastAppCommit.set(cluster, new Map([...own].map(([p, c]) => [p, c.offset])));
        await keptOn(cluster, own);
        previous = cluster;
      }
      // Back home: from where the visit to c stopped, to the end.
      const last = lastRead(reads.at(-1)!.read);
      await waitFor('the group back on a after its visit to c', () => positionedAt('a', last), {
        timeoutMs: 60_000,
        intervalMs: 100,
      });
      reads.push({ cluster: 'a', read: await visit('a', group, topic, undefined) });

      let replayed = 0;
      let skipped = 0;
      for (let p = 0; p < PARTITIONS; p++) {
        // A duplicate the replicator wrote into one copy is read twice on that cluster: counted once.
        const all = reads.flatMap(({ read }) => [...new Set(read.get(p) ?? [])]);
        replayed += all.length - new Set(all).size;
        const readOnce = new Set(all);
        for (const r of homeData[p]!) if (!readOnce.has(r.value!.toString())) skipped += 1;
      }
      console.log(`[mesh] ${group} moved a -> b -> c -> a: replayed=${replayed} skipped=${skipped}`);
      expect({ replayed, skipped }).toEqual({ replayed: 0, skipped: 0 });

      // No echo: the last commit each collector passed on is the application's own, never offsetsync's
      // commits that came later on b and c (and on a before the last visit); each collector dropped those.
      const nc = await natsConnection(bed.nats.url);
      const jsm = await nc.jetstreamManager();
      for (const cluster of ['b', 'c'] as const) {
        for (let p = 0; p < PARTITIONS; p++) {
          const last = await lastOnSubject(
            jsm,
            names.stream('committed'),
            names.committed(cluster, { group, topic, partition: p }),
          );
          expect(last && OffsetCommitted.decode(last.data).committedOffset).toBe(
            lastAppCommit.get(cluster)!.get(p),
          );
        }
      }
      const beats = await waitFor(
        'every collector counting the commits offsetsync made on its cluster',
        async () => {
          const all = await heartbeats(jsm, names, ServiceRole.SERVICE_ROLE_COLLECTOR);
          const filtered = CLUSTERS.map(
            (c) =>
              all.find((b) => b.sourceClusters[0] === c)?.progress?.eventsByOutcome
                .filtered_offsetsync_commit ?? 0,
          );
          return filtered.every((n) => n >= PARTITIONS) ? filtered : undefined;
        },
        { timeoutMs: 20_000, intervalMs: 200 },
      );
      console.log(`[mesh] offsetsync commits dropped by the collectors of a, b, c: ${beats.join(', ')}`);
    },
  );
});
