// Failover with Apache Kafka MirrorMaker 2 as the replicator (dedicated mode, its own offset sync off),
// once with the identity replication policy and once with MirrorMaker's default policy, which names the
// copy `<its source alias>.<topic>` (the link's topicNames say so): a group that consumed part of a topic
// whose records share timestamps moves to the target after offsetsync synced it, and reads the rest with
// nothing skipped and nothing replayed, judged by record identity (every value is a unique id). The
// target topic holds records of its own first, so no offset is the same on both clusters.
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { ApplyOutcome, Names, OffsetApplied } from '@offsetsync/contracts';
import { ensureKafkaDistribution, startMirrorMaker, stopMirrorMaker } from '@offsetsync/testbed';
import { startService } from '@offsetsync/harness';
import { waitFor } from '../infra/wait.js';
import { testConfig } from '../support/config.js';
import { lastOnSubject, natsConnection } from '../support/jetstream.js';
import { connectedAdmin, kafkaClient } from '../support/kafka-clients.js';
import { uniqueName } from '../support/names.js';

const testbed = inject('testbed');
const PARTITIONS = 3;
const PER_PARTITION = 3_000;
const OWN_RECORDS = (p: number) => 17 + p;
/** Where the group stops on the source: inside runs of records that share a timestamp. */
const STOP_AT = [1_503, 1_777, 2_001];

/** MirrorMaker's alias of the source cluster, not offsetsync's (`source`): the link's topicNames name it. */
const MM2_SOURCE_ALIAS = 'onprem';

const POLICIES = [
  { policy: 'identity', copyOf: (topic: string) => topic },
  { policy: 'default', copyOf: (topic: string) => `${MM2_SOURCE_ALIAS}.${topic}` },
] as const;

describe('failover with MirrorMaker 2', () => {
  it.each(POLICIES)(
    'moves a group to the target with 0 records skipped and 0 replayed ($policy replication policy)',
    { timeout: 300_000 },
    async ({ policy, copyOf }) => {
      const topic = uniqueName('mm2-failover');
      const copy = copyOf(topic);
      const group = uniqueName('mm2-failover-app');
      const source = kafkaClient(testbed.source.bootstrapServers);
      const target = kafkaClient(testbed.target.bootstrapServers);
      const sourceAdmin = await connectedAdmin(source);
      const targetAdmin = await connectedAdmin(target);

      // Source: runs of 5 records share a timestamp; every 40th record is stamped before its predecessor.
      await sourceAdmin.createTopics({
        topics: [{ topic, numPartitions: PARTITIONS }],
        waitForLeaders: true,
      });
      const producer = source.producer();
      await producer.connect();
      onTestFinished(() => producer.disconnect());
      const base = Date.now() - 30 * 60_000;
      for (let start = 0; start < PER_PARTITION; start += 1_000) {
        await producer.sendBatch({
          topicMessages: [
            {
              topic,
              messages: Array.from({ length: PARTITIONS }, (_, p) =>
                Array.from({ length: 1_000 }, (_, j) => {
                  const i = start + j;
                  const timestamp = base + Math.floor(i / 5) * 3 - (i % 40 === 39 ? 4 : 0);
                  return {
                    partition: p,
                    key: `k${i % 11}`,
                    value: `id:${p}:${i}`,
                    timestamp: String(timestamp),
                  };
                }),
              ).flat(),
            },
          ],
        });
      }
      // Target: the topic exists with records of its own, so MirrorMaker's copies land at other offsets.
      await targetAdmin.createTopics({
        topics: [{ topic: copy, numPartitions: PARTITIONS }],
        waitForLeaders: true,
      });
      const targetProducer = target.producer();
      await targetProducer.connect();
      onTestFinished(() => targetProducer.disconnect());
      await targetProducer.send({
        topic: copy,
        messages: Array.from({ length: PARTITIONS }, (_, p) =>
          Array.from({ length: OWN_RECORDS(p) }, (_, i) => ({
            partition: p,
            key: 'own',
            value: `own:${p}:${i}`,
          })),
        ).flat(),
      });

      const began = Date.now();
      const mirrorMaker = await startMirrorMaker({
        dir: `${testbed.workDir}/${topic}-mm2`,
        libDir: (await ensureKafkaDistribution()).libDir,
        sourceBootstrapServers: testbed.source.bootstrapServers,
        targetBootstrapServers: testbed.target.bootstrapServers,
        topics: [topic],
        instanceName: topic,
        sourceAlias: MM2_SOURCE_ALIAS,
        replicationPolicy: policy,
      });
      onTestFinished(() => stopMirrorMaker(mirrorMaker));
      console.log(`[mm2-failover] MirrorMaker 2 started in ${mirrorMaker.startedMs} ms`);

      const config = testConfig(testbed, {
        links: [
          {
            source: 'source',
            target: 'target',
            ...(policy === 'default'
              ? { topicNames: { policy: 'mirrormaker2', sourceAlias: MM2_SOURCE_ALIAS } }
              : {}),
          },
        ],
        collector: { cluster: 'source', groups: { include: [`^${group}$`] }, fetchMaxWaitMs: '20ms' },
        translator: { target: 'target', pendingRetryMinMs: '100ms', pendingRetryMaxMs: '1s' },
        committer: { target: 'target' },
      });
      const names = new Names(config.nats.subjectPrefix);
      await Promise.all([
        startService('collector', config),
        startService('translator', config),
        startService('committer', config),
      ]);

      await waitFor(
        'MirrorMaker to copy every record',
        async () => {
          const offsets = await targetAdmin.fetchTopicOffsets(copy);
          const copied = offsets.every((o) => Number(o.high) >= OWN_RECORDS(o.partition) + PER_PARTITION);
          return copied ? true : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 250 },
      );
      console.log(
        `[mm2-failover] every record on the target ${Date.now() - began} ms after MirrorMaker's launch`,
      );

      // The group consumes on the source up to its stop offsets, commits them and leaves.
      const consumedOnSource = new Set<string>();
      const consumer = source.consumer({ groupId: group });
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      const done = new Set<number>();
      await new Promise<void>((resolve, reject) => {
        consumer
          .run({
            autoCommit: false,
            eachBatch: async ({ batch }) => {
              const p = batch.partition;
              if (done.has(p)) return;
              for (const m of batch.messages) {
                if (Number(m.offset) >= STOP_AT[p]!) break;
                consumedOnSource.add(m.value!.toString());
              }
              if (Number(batch.lastOffset()) + 1 >= STOP_AT[p]!) {
                await consumer.commitOffsets([{ topic, partition: p, offset: String(STOP_AT[p]) }]);
                done.add(p);
                if (done.size === PARTITIONS) resolve();
              }
            },
          })
          .catch(reject);
      });
      await consumer.disconnect();
      expect(consumedOnSource.size).toBe(STOP_AT.reduce((a, b) => a + b, 0));

      const nc = await natsConnection(testbed.nats.url);
      const jsm = await nc.jetstreamManager();
      const applied = await waitFor(
        'the group applied on the target for every partition',
        async () => {
          const events: OffsetApplied[] = [];
          for (let p = 0; p < PARTITIONS; p++) {
            const message = await lastOnSubject(
              jsm,
              names.stream('applied'),
              names.applied('source', 'target', { group, topic, partition: p }),
            );
            const event = message && OffsetApplied.decode(message.data);
            if (event?.outcome !== ApplyOutcome.APPLY_OUTCOME_APPLIED || event.sourceOffset !== STOP_AT[p])
              return undefined;
            events.push(event);
          }
          return events;
        },
        { timeoutMs: 60_000, intervalMs: 250 },
      );
      expect(applied.map((a) => a.exact)).toEqual([true, true, true]);
      // Reported under both names (empty: the same).
      expect(applied.map((a) => [a.topic, a.targetTopic])).toEqual(
        Array.from({ length: PARTITIONS }, () => [topic, copy === topic ? '' : copy]),
      );
      // MirrorMaker wrote every copy once, after the target's own records.
      expect(applied.map((a) => a.targetOffset)).toEqual(STOP_AT.map((s, p) => s + OWN_RECORDS(p)));

      // The application moves: the same group on the target reads the rest.
      const ends = new Map(
        (await targetAdmin.fetchTopicOffsets(copy)).map((o) => [o.partition, Number(o.high)]),
      );
      const readOnTarget: string[] = [];
      const targetConsumer = target.consumer({ groupId: group });
      await targetConsumer.connect();
      onTestFinished(() => targetConsumer.disconnect());
      await targetConsumer.subscribe({ topic: copy, fromBeginning: true });
      const reachedEnd = new Set<number>();
      await new Promise<void>((resolve, reject) => {
        targetConsumer
          .run({
            autoCommit: false,
            eachBatch: ({ batch }) => {
              for (const m of batch.messages) readOnTarget.push(m.value!.toString());
              if (Number(batch.lastOffset()) + 1 >= ends.get(batch.partition)!)
                reachedEnd.add(batch.partition);
              if (reachedEnd.size === PARTITIONS) resolve();
              return Promise.resolve();
            },
          })
          .catch(reject);
      });

      // Judge by identity: a read of anything but a not yet consumed source record is a replay.
      const remaining = new Set<string>();
      for (let p = 0; p < PARTITIONS; p++)
        for (let i = STOP_AT[p]!; i < PER_PARTITION; i++) remaining.add(`id:${p}:${i}`);
      const replayed = readOnTarget.filter((id) => !remaining.has(id)).length;
      const read = new Set(readOnTarget);
      const skipped = [...remaining].filter((id) => !read.has(id)).length;
      console.log(
        `[mm2-failover] ${policy} policy, ${copy} on the target: ${PARTITIONS * PER_PARTITION} records, ${readOnTarget.length} read on the target: replayed=${replayed} skipped=${skipped}`,
      );
      expect({ replayed, skipped }).toEqual({ replayed: 0, skipped: 0 });
    },
  );
});
