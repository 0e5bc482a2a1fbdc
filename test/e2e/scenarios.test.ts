// The three services and the test replicator on the real two-cluster bed, in the situations operators
// meet: records not replicated yet, rewinds, groups still running on the target, LogAppendTime targets,
// crashes of the translator and the committer.
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import type { KafkaAdapter } from '@offsetsync/kafka';
import {
  ApplyOutcome,
  Names,
  OffsetApplied,
  OffsetCommitted,
  OffsetTranslated,
  RefusalReason,
  SkipReason,
  TranslationOutcome,
} from '@offsetsync/contracts';
import {
  type ReplicatorOptions,
  type Role,
  type ServiceProcess,
  startReplicator,
  startService,
  type TestReplicator,
} from '@offsetsync/harness';
import { assertToolSucceeded, consumerGroupsCommand } from '../infra/kafka-tools.js';
import { waitFor } from '../infra/wait.js';
import { testConfig, type TestConfig } from '../support/config.js';
import { lastOnSubject, natsConnection } from '../support/jetstream.js';
import { connectedAdmin, kafkaClient, testAdapter } from '../support/kafka-clients.js';
import { uniqueName } from '../support/names.js';

const testbed = inject('testbed');

interface Bed {
  topic: string;
  config: TestConfig;
  names: Names;
  replicator: TestReplicator;
  source: KafkaAdapter;
  target: KafkaAdapter;
  start(role: Role): Promise<ServiceProcess>;
  /** Commits on the source the way an application's admin tooling would. */
  commitOnSource(group: string, partition: number, offset: number): Promise<void>;
  /** The group's committed offset on the target, or undefined. */
  targetCommit(group: string, partition: number): Promise<number | undefined>;
  lastApplied(group: string, partition: number): Promise<OffsetApplied | undefined>;
  lastTranslated(group: string, partition: number): Promise<OffsetTranslated | undefined>;
  /** The source offset of the group's last OffsetCommitted event, if any. */
  lastCollected(group: string, partition: number): Promise<number | undefined>;
}

/** A topic of `partitions` x `records` on the source, replicated with duplicates, and a private prefix. */
async function bed(options: {
  partitions: number;
  records: number;
  groupPattern: string;
  replicator?: Partial<ReplicatorOptions>;
  sections?: Record<string, unknown>;
}): Promise<Bed> {
  const topic = uniqueName('scenario');
  const kafka = kafkaClient(testbed.source.bootstrapServers);
  await (
    await connectedAdmin(kafka)
  ).createTopics({ topics: [{ topic, numPartitions: options.partitions }], waitForLeaders: true });
  const producer = kafka.producer();
  await producer.connect();
  onTestFinished(() => producer.disconnect());
  const base = Date.now() - 10 * 60_000;
  await producer.send({
    topic,
    messages: Array.from({ length: options.partitions }, (_, p) =>
      Array.from({ length: options.records }, (_, i) => ({
        key: `k${i % 13}`,
        value: `id:${p}:${i}`,
        partition: p,
        timestamp: String(base + Math.floor(i / 3)),
      })),
    ).flat(),
  });
  const replicator = await startReplicator({
    source: testbed.source,
    target: testbed.target,
    topic,
    maxBatchRecords: 100,
    duplicates: { probability: 0.2, seed: 5 },
    ...options.replicator,
  });
  const config = testConfig(testbed, {
    collector: { cluster: 'source', groups: { include: [options.groupPattern] }, fetchMaxWaitMs: '20ms' },
    translator: { target: 'target', pendingRetryMinMs: '100ms', pendingRetryMaxMs: '500ms' },
    committer: { target: 'target', activeGroupRetryMs: '1s' },
    ...options.sections,
  });
  const names = new Names(config.nats.subjectPrefix);
  const source = testAdapter(testbed.source.bootstrapServers);
  const target = testAdapter(testbed.target.bootstrapServers);
  const nc = await natsConnection(testbed.nats.url);
  const jsm = await nc.jetstreamManager();
  return {
    topic,
    config,
    names,
    replicator,
    source,
    target,
    start: (role) => startService(role, config),
    async commitOnSource(group, partition, offset) {
      const [answer] = await source.commitOffsets(group, [{ topic, partition, offset, metadata: null }]);
      if (answer?.error) throw answer.error;
    },
    async targetCommit(group, partition) {
      const offsets = await target.fetchCommittedOffsets(group, [topic]);
      return offsets.find((o) => o.partition === partition)?.offset;
    },
    async lastApplied(group, partition) {
      const message = await lastOnSubject(
        jsm,
        names.stream('applied'),
        names.applied('source', 'target', { group, topic, partition }),
      );
      return message && OffsetApplied.decode(message.data);
    },
    async lastCollected(group, partition) {
      const message = await lastOnSubject(
        jsm,
        names.stream('committed'),
        names.committed('source', { group, topic, partition }),
      );
      return message && OffsetCommitted.decode(message.data).committedOffset;
    },
    async lastTranslated(group, partition) {
      const message = await lastOnSubject(
        jsm,
        names.stream('translated'),
        names.translated('source', 'target', { group, topic, partition }),
      );
      return message && OffsetTranslated.decode(message.data);
    },
  };
}

/** Waits until the group's offset on the target is a copy of the source record at `sourceOffset`. */
async function convergedTo(b: Bed, group: string, partition: number, sourceOffset: number): Promise<number> {
  return waitFor(
    `${group.length > 80 ? `${group.slice(0, 40)}... (${group.length} characters)` : group}/${partition} at the copy of source offset ${sourceOffset}`,
    async () => {
      const copies = b.replicator.targetOffsetsOf(partition, sourceOffset);
      const committed = await b.targetCommit(group, partition);
      return committed !== undefined && copies.includes(committed) ? committed : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  );
}

describe('end to end', () => {
  it('keeps a commit pending while its record is not replicated, never committing the log end, then applies it exactly', async () => {
    const group = uniqueName('pending-g');
    const b = await bed({
      partitions: 1,
      records: 1000,
      groupPattern: `^${group}$`,
      replicator: { copyUntil: { 0: 500 } },
    });
    await Promise.all([b.start('collector'), b.start('translator'), b.start('committer')]);
    await b.replicator.waitUntilCaughtUp(60_000);

    await b.commitOnSource(group, 0, 800);
    const pending = await waitFor(
      'a pending translation retried at least twice',
      async () => {
        const t = await b.lastTranslated(group, 0);
        return t?.outcome === TranslationOutcome.TRANSLATION_OUTCOME_PENDING && t.attempts >= 2
          ? t
          : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 50 },
    );
    expect(pending.targetOffset).toBe(-1);
    // Nothing was committed on the target meanwhile: in particular not its log end.
    expect(await b.targetCommit(group, 0)).toBeUndefined();

    b.replicator.copyAll();
    await convergedTo(b, group, 0, 800);
  });

  it('applies the commits of a group whose id is 10,000 characters long, and of the group committed beside it', async () => {
    // A subject with the long id written out would pass nats-server's 4 KB control line, and the server
    // closes a connection that sends one: every publish of the collector would fail, for every group.
    const prefix = uniqueName('long-g');
    const long = prefix + 'g'.repeat(10_000 - prefix.length);
    const short = `${prefix}-short`;
    const b = await bed({ partitions: 1, records: 1000, groupPattern: `^${prefix}` });
    await Promise.all([b.start('collector'), b.start('translator'), b.start('committer')]);
    await b.replicator.waitUntilCaughtUp(60_000);
    await b.commitOnSource(long, 0, 400);
    await b.commitOnSource(short, 0, 500);
    await convergedTo(b, short, 0, 500);
    await convergedTo(b, long, 0, 400);
    expect((await b.lastApplied(long, 0))?.group).toBe(long);
  });

  it('follows a rewind on the source', async () => {
    const group = uniqueName('rewind-g');
    const b = await bed({ partitions: 1, records: 1000, groupPattern: `^${group}$` });
    await Promise.all([b.start('collector'), b.start('translator'), b.start('committer')]);
    await b.replicator.waitUntilCaughtUp(60_000);
    await b.commitOnSource(group, 0, 900);
    await convergedTo(b, group, 0, 900);

    assertToolSucceeded(
      await consumerGroupsCommand(testbed.source.bootstrapServers, [
        '--reset-offsets',
        '--group',
        group,
        '--topic',
        b.topic,
        '--to-offset',
        '300',
        '--execute',
      ]),
    );
    await convergedTo(b, group, 0, 300);
  });

  it('skips a group that is active on the target, reports it, and applies it after it left and the source committed again', async () => {
    const group = uniqueName('active-g');
    const b = await bed({ partitions: 1, records: 1000, groupPattern: `^${group}$` });
    await Promise.all([b.start('collector'), b.start('translator'), b.start('committer')]);
    await b.replicator.waitUntilCaughtUp(60_000);
    await b.commitOnSource(group, 0, 400);
    const before = await convergedTo(b, group, 0, 400);

    // The application already runs on the target with the same group.
    const consumer = kafkaClient(testbed.target.bootstrapServers).consumer({ groupId: group });
    await consumer.connect();
    onTestFinished(() => consumer.disconnect());
    await consumer.subscribe({ topic: b.topic });
    let joined = false;
    consumer.on(consumer.events.GROUP_JOIN, () => (joined = true));
    await consumer.run({ autoCommit: false, eachMessage: () => Promise.resolve() });
    await waitFor('the target consumer to join', () => Promise.resolve(joined ? true : undefined), {
      timeoutMs: 30_000,
    });

    await b.commitOnSource(group, 0, 600);
    const skipped = await waitFor(
      'the commit skipped as active on the target',
      async () => {
        const a = await b.lastApplied(group, 0);
        return a?.outcome === ApplyOutcome.APPLY_OUTCOME_SKIPPED && a.sourceOffset === 600 ? a : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 50 },
    );
    expect(skipped.skipReason).toBe(SkipReason.SKIP_REASON_ACTIVE_ON_TARGET);
    expect(await b.targetCommit(group, 0)).toBe(before);

    await consumer.disconnect();
    // Each new source commit is tried; once the group is empty (and the committer's 1 s pause for the
    // group has passed) one is applied.
    let next = 700;
    await waitFor(
      'a newer source commit applied after the application left',
      async () => {
        const a = await b.lastApplied(group, 0);
        if (a?.outcome === ApplyOutcome.APPLY_OUTCOME_APPLIED && a.sourceOffset >= 700) return true;
        if (a?.sourceOffset === next) next += 1;
        await b.commitOnSource(group, 0, next);
        return undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    const applied = await b.lastApplied(group, 0);
    await convergedTo(b, group, 0, applied!.sourceOffset);
  });

  it('refuses a target topic with LogAppendTime timestamps and commits nothing', async () => {
    const group = uniqueName('lat-g');
    const b = await bed({
      partitions: 1,
      records: 200,
      groupPattern: `^${group}$`,
      replicator: { targetTopicConfigs: { 'message.timestamp.type': 'LogAppendTime' } },
    });
    await Promise.all([b.start('collector'), b.start('translator'), b.start('committer')]);
    await b.replicator.waitUntilCaughtUp(60_000);
    await b.commitOnSource(group, 0, 100);
    const refused = await waitFor(
      'the refusal',
      async () => {
        const t = await b.lastTranslated(group, 0);
        return t?.outcome === TranslationOutcome.TRANSLATION_OUTCOME_REFUSED ? t : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 50 },
    );
    expect(refused.refusalReason).toBe(RefusalReason.REFUSAL_REASON_LOG_APPEND_TIME_TARGET);
    expect(await b.targetCommit(group, 0)).toBeUndefined();
  });

  it('converges exactly after kill -9 of the translator and the committer mid-stream; target offsets never move backwards', async () => {
    const prefix = uniqueName('crash-g');
    const groups = Array.from({ length: 15 }, (_, i) => `${prefix}-${i}`);
    const b = await bed({ partitions: 3, records: 2000, groupPattern: `^${prefix}-` });
    await b.start('collector');
    let translator = await b.start('translator');
    let committer = await b.start('committer');
    await b.replicator.waitUntilCaughtUp(60_000);

    // Sample every group's target offset throughout; remember any step backwards.
    const seen = new Map<string, number>();
    const backwards: string[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        for (const [i, group] of groups.entries()) {
          const offset = await b.targetCommit(group, i % 3);
          if (offset === undefined) continue;
          const previous = seen.get(group);
          if (previous !== undefined && offset < previous)
            backwards.push(`${group}: ${previous} -> ${offset}`);
          seen.set(group, offset);
        }
      }
    })();
    onTestFinished(async () => {
      sampling = false;
      await sampler;
    });

    const rounds = 12;
    const offsetAt = (round: number, i: number) => round * 150 + i;
    for (let round = 1; round <= rounds; round++) {
      await Promise.all(groups.map((group, i) => b.commitOnSource(group, i % 3, offsetAt(round, i))));
      if (round === 4) await Promise.all([translator.kill(), committer.kill()]);
      if (round === 7)
        [translator, committer] = await Promise.all([b.start('translator'), b.start('committer')]);
      // Pace the rounds by the collector: the next round starts once this one is on JetStream.
      await waitFor(
        `round ${round} collected`,
        async () => {
          for (const [i, group] of groups.entries()) {
            if ((await b.lastCollected(group, i % 3)) !== offsetAt(round, i)) return undefined;
          }
          return true;
        },
        { timeoutMs: 30_000, intervalMs: 50 },
      );
    }
    for (const [i, group] of groups.entries()) await convergedTo(b, group, i % 3, offsetAt(rounds, i));
    sampling = false;
    await sampler;
    expect(backwards).toEqual([]);
  });

  it("does not overwrite the application's newer progress on the target when the collector restarts and replays", async () => {
    const group = uniqueName('moved-g');
    const sentinel = uniqueName('moved-sentinel');
    const b = await bed({ partitions: 1, records: 1000, groupPattern: `^(${group}|${sentinel})$` });
    const collector = await b.start('collector');
    await Promise.all([b.start('translator'), b.start('committer')]);
    await b.replicator.waitUntilCaughtUp(60_000);
    await b.commitOnSource(group, 0, 300);
    const synced = await convergedTo(b, group, 0, 300);

    // The application moves to the target, consumes 100 records there and commits (no offsetsync mark).
    const consumer = kafkaClient(testbed.target.bootstrapServers).consumer({ groupId: group });
    await consumer.connect();
    onTestFinished(() => consumer.disconnect());
    await consumer.subscribe({ topic: b.topic });
    const own = synced + 100;
    await new Promise<void>((resolve, reject) => {
      consumer
        .run({
          autoCommit: false,
          eachMessage: async ({ message }) => {
            if (Number(message.offset) + 1 === own) {
              await consumer.commitOffsets([{ topic: b.topic, partition: 0, offset: String(own) }]);
              resolve();
            }
          },
        })
        .catch(reject);
    });
    await consumer.disconnect();
    expect(await b.targetCommit(group, 0)).toBe(own);

    // The collector restarts under a new consumer group: it reads the offsets topic from the start again
    // and publishes the old source commit once more.
    await collector.stop();
    await startService('collector', {
      ...b.config,
      collector: {
        ...(b.config.collector as Record<string, unknown>),
        consumerGroup: uniqueName('offsetsync-collector-replay'),
      },
    });
    // A later commit of another group passing through the whole pipeline marks the replay as done.
    await b.commitOnSource(sentinel, 0, 500);
    await convergedTo(b, sentinel, 0, 500);
    expect(await b.targetCommit(group, 0)).toBe(own);
  });
});
