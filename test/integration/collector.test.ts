// The collector against the real source cluster and nats-server, run as separate processes.
import { consumerOpts } from 'nats';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import type { KafkaAdapter } from '@offsetsync/kafka';
import {
  AnchorStatus,
  DeletionReason,
  Names,
  OffsetCommitted,
  OffsetDeleted,
  ServiceRole,
} from '@offsetsync/contracts';
import { recordFingerprint } from '@offsetsync/kafka';
import { startService } from '@offsetsync/harness';
import {
  encodeGroupMetadataKey,
  encodeOffsetCommitKey,
  encodeOffsetCommitValue,
} from '../../services/collector/src/offsets-topic-encoder.js';
import { assertToolSucceeded, consumerGroupsCommand } from '../infra/kafka-tools.js';
import { waitFor } from '../infra/wait.js';
import { testConfig } from '../support/config.js';
import { heartbeats, lastOnSubject, natsConnection, subjectsIn } from '../support/jetstream.js';
import { connectedAdmin, kafkaClient, testAdapter } from '../support/kafka-clients.js';
import { freePort } from '../infra/free-port.js';
import { uniqueName } from '../support/names.js';

const testbed = inject('testbed');

async function sourceAdapter(): Promise<KafkaAdapter> {
  const adapter = testAdapter(testbed.source.bootstrapServers, 'collector-test');
  await adapter.connect();
  return adapter;
}

/** Creates a topic on the source and writes `count` records with distinct keys, values and timestamps. */
async function seedTopic(
  topic: string,
  partitions: number,
  count: number,
): Promise<{ key: string; value: string; timestamp: number }[]> {
  const kafka = kafkaClient(testbed.source.bootstrapServers);
  const admin = await connectedAdmin(kafka);
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true });
  const producer = kafka.producer();
  await producer.connect();
  onTestFinished(() => producer.disconnect());
  const base = Date.now() - 60_000;
  const records = Array.from({ length: count }, (_, i) => ({
    key: `key-${i}`,
    value: `value-${i}`,
    timestamp: base + i * 10,
  }));
  for (let p = 0; p < partitions; p++) {
    await producer.send({
      topic,
      messages: records.map((r) => ({
        key: r.key,
        value: r.value,
        timestamp: String(r.timestamp),
        partition: p,
      })),
    });
  }
  return records;
}

async function collectorRunning(names: Names, count: number): Promise<void> {
  const nc = await natsConnection(testbed.nats.url);
  const jsm = await nc.jetstreamManager();
  await waitFor(
    `${count} collector heartbeat(s) without problems`,
    async () => {
      const beats = await heartbeats(jsm, names, ServiceRole.SERVICE_ROLE_COLLECTOR).catch(() => []);
      return beats.length >= count && beats.every((b) => b.problems.length === 0) ? true : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  );
}

describe('collector', () => {
  it("publishes a real group's commit with anchors that match the records around it", async () => {
    const topic = uniqueName('col-anchors');
    const group = uniqueName('col-app');
    const records = await seedTopic(topic, 1, 10);
    const config = testConfig(testbed, {
      collector: { cluster: 'source', groups: { include: [`^${group}$`] }, fetchMaxWaitMs: '20ms' },
    });
    const names = new Names(config.nats.subjectPrefix);
    await startService('collector', config);
    await collectorRunning(names, 1);

    // A real consumer group consumes everything and commits 6: records 0..5 are done.
    const kafka = kafkaClient(testbed.source.bootstrapServers);
    const consumer = kafka.consumer({ groupId: group });
    await consumer.connect();
    onTestFinished(() => consumer.disconnect());
    await consumer.subscribe({ topic, fromBeginning: true });
    let seen = 0;
    await new Promise<void>((resolve, reject) => {
      consumer
        .run({
          autoCommit: false,
          eachMessage: () => {
            if (++seen === 10) resolve();
            return Promise.resolve();
          },
        })
        .catch(reject);
    });
    await consumer.commitOffsets([{ topic, partition: 0, offset: '6' }]);
    const committedAt = Date.now();

    const nc = await natsConnection(testbed.nats.url);
    const jsm = await nc.jetstreamManager();
    const subject = names.committed('source', { group, topic, partition: 0 });
    const event = await waitFor(
      'the OffsetCommitted event',
      async () => {
        const message = await lastOnSubject(jsm, names.stream('committed'), subject);
        if (message === undefined) return undefined;
        const decoded = OffsetCommitted.decode(message.data);
        return decoded.committedOffset === 6 ? decoded : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 10 },
    );
    console.log(
      `[collector] commit on the source to event on JetStream: ${Date.now() - committedAt} ms (polled every 10 ms)`,
    );

    const fingerprint = (i: number) =>
      recordFingerprint(Buffer.from(records[i]!.key), Buffer.from(records[i]!.value));
    expect(event).toMatchObject({
      sourceCluster: 'source',
      group,
      topic,
      partition: 0,
      committedOffset: 6,
      anchorStatus: AnchorStatus.ANCHOR_STATUS_RESOLVED,
      lastConsumed: { offset: 5, timestampMs: records[5]!.timestamp, fingerprint: fingerprint(5) },
      nextRecord: { offset: 6, timestampMs: records[6]!.timestamp, fingerprint: fingerprint(6) },
      sourceLogStartOffset: 0,
      sourceLogEndOffset: 10,
    });
    expect(event.version?.offsetsPartition).toBeGreaterThanOrEqual(0);
  });

  it('loses no commit when one of two collector instances is killed with SIGKILL mid-stream', async () => {
    const topic = uniqueName('col-kill');
    const groupPrefix = uniqueName('col-kill-g');
    await seedTopic(topic, 3, 120);
    const config = testConfig(testbed, {
      collector: {
        cluster: 'source',
        groups: { include: [`^${groupPrefix}`] },
        sessionTimeoutMs: '6s',
        fetchMaxWaitMs: '20ms',
      },
    });
    const names = new Names(config.nats.subjectPrefix);
    const first = await startService('collector', config);
    await startService('collector', config);
    await collectorRunning(names, 2);

    const adapter = await sourceAdapter();
    const groups = Array.from({ length: 30 }, (_, i) => `${groupPrefix}-${i}`);
    const rounds = 20;
    for (let round = 1; round <= rounds; round++) {
      await Promise.all(
        groups.map(async (group, i) => {
          const answers = await adapter.commitOffsets(group, [
            { topic, partition: i % 3, offset: round * 5, metadata: null },
          ]);
          expect(answers.every((a) => a.error === undefined)).toBe(true);
        }),
      );
      if (round === 8) await first.kill();
    }

    const nc = await natsConnection(testbed.nats.url);
    const jsm = await nc.jetstreamManager();
    const stream = names.stream('committed');
    await waitFor(
      'every group to reach its last commit in the state stream',
      async () => {
        for (const [i, group] of groups.entries()) {
          const message = await lastOnSubject(
            jsm,
            stream,
            names.committed('source', { group, topic, partition: i % 3 }),
          );
          if (message === undefined || OffsetCommitted.decode(message.data).committedOffset !== rounds * 5)
            return undefined;
        }
        return true;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    // The state stream holds exactly one message per group partition: the latest.
    const subjects = await subjectsIn(jsm, stream, names.committedFilter('source'));
    expect(Object.keys(subjects)).toHaveLength(groups.length);
    expect(Object.values(subjects).every((count) => count === 1)).toBe(true);
  });

  it('publishes deletion events when offsets are deleted and when a group is deleted', async () => {
    const topic = uniqueName('col-del');
    const group = uniqueName('col-del-g');
    await seedTopic(topic, 2, 5);
    const config = testConfig(testbed, {
      collector: { cluster: 'source', groups: { include: [`^${group}$`] } },
    });
    const names = new Names(config.nats.subjectPrefix);
    await startService('collector', config);
    await collectorRunning(names, 1);

    const adapter = await sourceAdapter();
    await adapter.commitOffsets(group, [
      { topic, partition: 0, offset: 3, metadata: null },
      { topic, partition: 1, offset: 4, metadata: null },
    ]);
    const nc = await natsConnection(testbed.nats.url);
    const jsm = await nc.jetstreamManager();
    const stream = names.stream('committed');
    const eventOn = (subject: string, kind: string) =>
      waitFor(
        `${kind} on ${subject}`,
        async () => {
          const message = await lastOnSubject(jsm, stream, subject);
          return message?.headers.get('Offsetsync-Event') === kind ? message : undefined;
        },
        { timeoutMs: 15_000, intervalMs: 50 },
      );
    await eventOn(names.committed('source', { group, topic, partition: 1 }), 'OffsetCommitted');

    assertToolSucceeded(
      await consumerGroupsCommand(testbed.source.bootstrapServers, [
        '--delete-offsets',
        '--group',
        group,
        '--topic',
        `${topic}:1`,
      ]),
    );
    const offsetDeleted = await eventOn(
      names.committed('source', { group, topic, partition: 1 }),
      'OffsetDeleted',
    );
    expect(OffsetDeleted.decode(offsetDeleted.data)).toMatchObject({
      group,
      topic,
      partition: 1,
      reason: DeletionReason.DELETION_REASON_OFFSET_DELETED,
    });

    await (await connectedAdmin(kafkaClient(testbed.source.bootstrapServers))).deleteGroups([group]);
    const partitionDeleted = await eventOn(
      names.committed('source', { group, topic, partition: 0 }),
      'OffsetDeleted',
    );
    expect(OffsetDeleted.decode(partitionDeleted.data)).toMatchObject({ group, topic, partition: 0 });
    const groupDeleted = await eventOn(names.committedGroup('source', group), 'OffsetDeleted');
    expect(OffsetDeleted.decode(groupDeleted.data)).toMatchObject({
      group,
      partition: -1,
      reason: DeletionReason.DELETION_REASON_GROUP_DELETED,
    });
  });

  it('skips and counts corrupt and unknown records in a test offsets topic and goes on', async () => {
    const dataTopic = uniqueName('col-data');
    const offsetsTopic = uniqueName('col-offsets');
    const group = uniqueName('col-corrupt-g');
    await seedTopic(dataTopic, 1, 10);
    const admin = await connectedAdmin(kafkaClient(testbed.source.bootstrapServers));
    await admin.createTopics({ topics: [{ topic: offsetsTopic, numPartitions: 1 }], waitForLeaders: true });
    const config = testConfig(testbed, {
      collector: { cluster: 'source', offsetsTopic, groups: { include: [`^${group}$`] } },
    });
    const names = new Names(config.nats.subjectPrefix);
    await startService('collector', config);
    await collectorRunning(names, 1);

    const commit = (offset: number) => ({
      key: encodeOffsetCommitKey({ group, topic: dataTopic, partition: 0 }),
      value: encodeOffsetCommitValue({
        group,
        topic: dataTopic,
        partition: 0,
        offset,
        commitTimestampMs: Date.now(),
      }),
    });
    const producer = kafkaClient(testbed.source.bootstrapServers).producer();
    await producer.connect();
    onTestFinished(() => producer.disconnect());
    // One record per send; the collector may still read several in one batch and coalesce the commits.
    for (const message of [
      commit(2),
      { key: Buffer.from([0x00]), value: Buffer.from([0x01]) }, // malformed key
      { key: encodeGroupMetadataKey(group, 99), value: Buffer.from([0, 1]) }, // unknown record type
      {
        key: encodeOffsetCommitKey({ group, topic: dataTopic, partition: 0 }),
        value: Buffer.from([0, 9, 1, 2]),
      }, // unknown value version
      commit(7),
    ]) {
      await producer.send({ topic: offsetsTopic, messages: [message] });
    }

    const nc = await natsConnection(testbed.nats.url);
    const jsm = await nc.jetstreamManager();
    const subject = names.committed('source', { group, topic: dataTopic, partition: 0 });
    await waitFor(
      'the commit after the bad records',
      async () => {
        const message = await lastOnSubject(jsm, names.stream('committed'), subject);
        return message && OffsetCommitted.decode(message.data).committedOffset === 7 ? true : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 50 },
    );
    const counts = await waitFor(
      'a heartbeat that counts the skipped records',
      async () => {
        const [beat] = await heartbeats(jsm, names, ServiceRole.SERVICE_ROLE_COLLECTOR);
        const byOutcome = beat?.progress?.eventsByOutcome ?? {};
        // Both commits handled: published, or coalesced into the newer one when they shared a batch.
        return (byOutcome.committed ?? 0) + (byOutcome.superseded ?? 0) >= 2 ? byOutcome : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    expect(counts).toMatchObject({ decode_error: 1, unknown_record: 2 });
  });

  it('drops the offset commits of an aborted transaction and keeps the committed ones', async () => {
    const topic = uniqueName('col-txn');
    const group = uniqueName('col-txn-g');
    await seedTopic(topic, 1, 20);
    const config = testConfig(testbed, {
      collector: { cluster: 'source', groups: { include: [`^${group}$`] } },
    });
    const names = new Names(config.nats.subjectPrefix);
    await startService('collector', config);
    await collectorRunning(names, 1);

    // Watch every event on the group's subject as it is published, not only the last one.
    const nc = await natsConnection(testbed.nats.url);
    const seen: number[] = [];
    const opts = consumerOpts();
    opts.orderedConsumer();
    opts.callback((error, message) => {
      if (error === null && message !== null) seen.push(OffsetCommitted.decode(message.data).committedOffset);
    });
    const subscription = await nc
      .jetstream()
      .subscribe(names.committed('source', { group, topic, partition: 0 }), opts);
    onTestFinished(() => subscription.unsubscribe());

    const kafka = kafkaClient(testbed.source.bootstrapServers);
    const producer = kafka.producer({
      transactionalId: uniqueName('txn'),
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();
    onTestFinished(() => producer.disconnect());
    const committedTxn = await producer.transaction();
    await committedTxn.sendOffsets({
      consumerGroupId: group,
      topics: [{ topic, partitions: [{ partition: 0, offset: '5' }] }],
    });
    await committedTxn.commit();
    // The coordinator may still be writing the first transaction's markers (CONCURRENT_TRANSACTIONS):
    // try the second one again until it is accepted.
    await waitFor(
      'an aborted transaction with offsets',
      async () => {
        const abortedTxn = await producer.transaction();
        try {
          await abortedTxn.sendOffsets({
            consumerGroupId: group,
            topics: [{ topic, partitions: [{ partition: 0, offset: '9' }] }],
          });
        } finally {
          await abortedTxn.abort();
        }
        return true;
      },
      { timeoutMs: 15_000, intervalMs: 200 },
    );
    await (await sourceAdapter()).commitOffsets(group, [{ topic, partition: 0, offset: 7, metadata: null }]);

    await waitFor(
      'the commit after the aborted transaction',
      () => Promise.resolve(seen.includes(7) ? true : undefined),
      {
        timeoutMs: 15_000,
      },
    );
    expect(seen).toEqual([5, 7]);
  });

  it('keeps running and reports the problem in its heartbeats while the source cluster is unreachable', async () => {
    const closedPort = await freePort();
    const config = testConfig(testbed, { collector: { cluster: 'source' } });
    (config.clusters as Record<string, unknown>).source = {
      bootstrapServers: [`127.0.0.1:${closedPort}`],
      connectionTimeoutMs: '500ms',
      requestTimeoutMs: '2s',
    };
    const names = new Names(config.nats.subjectPrefix);
    const collector = await startService('collector', config);
    const nc = await natsConnection(testbed.nats.url);
    const jsm = await nc.jetstreamManager();
    const problem = await waitFor(
      'a heartbeat reporting the unreachable cluster',
      async () => {
        const [beat] = await heartbeats(jsm, names, ServiceRole.SERVICE_ROLE_COLLECTOR).catch(() => []);
        return beat?.problems.find((p) => p.code === 'KAFKA_UNREACHABLE');
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    expect(problem.detail).toMatch(/offsets topic|consumer|connect/i);
    const log = await collector.log();
    expect(log).toMatch(/cannot read __consumer_offsets; retrying/);
    // Still running, still heartbeating: no crash loop.
    expect(
      await Promise.race([
        collector.exited,
        new Promise((resolve) => setTimeout(() => resolve('running'), 500)),
      ]),
    ).toBe('running');
  });

  it('refuses a bad config with every problem listed and a non-zero exit code', async () => {
    const config = testConfig(testbed, {
      collector: {
        cluster: 'nowhere',
        fetchMaxWaitMs: '10 minutes',
        groups: { include: ['(unclosed'] },
        // Compiles without the Unicode flag only: refused at the config check, not when the filter is built.
        topics: { include: ['orders\\-eu'] },
      },
    });
    const collector = await startService('collector', config);
    expect(await collector.exited).toBe(2);
    const output = await collector.log();
    expect(output).toContain('collector.cluster');
    expect(output).toContain('collector.fetchMaxWaitMs');
    expect(output).toContain('collector.groups.include.0');
    expect(output).toContain('collector.topics.include.0');
  });
});
