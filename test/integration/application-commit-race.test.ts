// An application that uses assign() (Flink, Spark, admin tools) commits on the target without being a
// member of the group, so the broker takes offsetsync's admin-style commit too. The commit pipeline runs
// in this process against the real target cluster and nats-server, with its beforeCommit seam holding a
// group between the decision and the final read of the target: there the application commits through
// kafkajs' admin (OffsetCommit with generation -1 and no member, as an assign() consumer does), and
// offsetsync must report that commit and keep it.
import { metrics } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { AckPolicy, headers } from 'nats';
import pino from 'pino';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import {
  ApplyOutcome,
  formatCommitMetadata,
  Names,
  OffsetApplied,
  OffsetTranslated,
  parseCommitMetadata,
  SkipReason,
  TranslationOutcome,
  type GroupPartition,
  type Version,
} from '@offsetsync/contracts';
import {
  JetStreamPublisher,
  provisionKvBucket,
  provisionStreams,
  publishAll,
  streamSpecs,
} from '@offsetsync/jetstream';
import { KafkaAdapter } from '@offsetsync/kafka';
import { ActiveGroups } from '../../services/committer/src/active-groups.js';
import { KvAppliedVersionsStore } from '../../services/committer/src/applied-versions-store.js';
import { decodeAppliedRecord } from '../../services/committer/src/applied-record.js';
import { CommitPipeline } from '../../services/committer/src/commit-pipeline.js';
import { OutcomeCounters } from '../../services/committer/src/outcome-counters.js';
import { lastOnSubject, natsConnection } from '../support/jetstream.js';
import { connectedAdmin, kafkaClient } from '../support/kafka-clients.js';
import { uniqueName } from '../support/names.js';

const testbed = inject('testbed');

const markOf = (version: Version) =>
  formatCommitMetadata(
    { origin: 'source', offsetsPartition: version.offsetsPartition, offsetsOffset: version.offsetsOffset },
    '',
  );

/** The committer's parts for one link, in this process, on the real servers; logs kept for the test. */
async function pipelineOnRealServers(beforeCommit: (group: string) => Promise<void>) {
  const prefix = uniqueName('race').replaceAll('-', '_');
  const names = new Names(prefix);
  const nc = await natsConnection(testbed.nats.url);
  const jsm = await nc.jetstreamManager();
  const js = nc.jetstream();
  await provisionStreams(jsm, streamSpecs(names, 1));
  const bucket = names.bucket('applied-versions');
  await provisionKvBucket(js, bucket, 1);
  const durable = 'committer-source-target';
  await jsm.consumers.add(names.stream('translated'), {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    filter_subject: names.translatedFilter('source', 'target'),
  });
  const publisher = new JetStreamPublisher(nc);
  onTestFinished(() => publisher.close());

  const adapter = new KafkaAdapter({
    cluster: {
      bootstrapServers: [testbed.target.bootstrapServers],
      connectionTimeoutMs: 3000,
      requestTimeoutMs: 10_000,
    },
    clientId: 'application-commit-race-test',
    logger: pino({ level: 'silent' }),
  });
  await adapter.connect();
  onTestFinished(() => adapter.disconnect());

  const logLines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) });
  const counters = new OutcomeCounters(metrics.getMeter('application-commit-race-test'));
  const store = new KvAppliedVersionsStore(publisher, bucket);
  const pipeline = new CommitPipeline({
    names,
    source: 'source',
    target: 'target',
    store,
    cluster: adapter,
    publish: (messages) => publishAll(publisher, messages, { concurrency: 16 }),
    counters,
    activeGroups: new ActiveGroups(1000),
    backoff: { minMs: 100, maxMs: 1000 },
    tracer: new BasicTracerProvider().getTracer('application-commit-race-test'),
    logger,
    beforeCommit,
  });
  const consumer = await js.consumers.get(names.stream('translated'), durable);

  /** Publishes a translation as a translator would, pulls it from the durable and runs it through the pipeline. */
  async function handle(
    key: GroupPartition,
    version: Version,
    targetOffset: number,
    sourceCommitTimestampMs = Date.now() - 1000,
  ): Promise<void> {
    const hdrs = headers();
    hdrs.set('Offsetsync-Event', 'OffsetTranslated');
    await publishAll(
      publisher,
      [
        {
          subject: names.translated('source', 'target', key),
          payload: OffsetTranslated.encode(
            OffsetTranslated.fromPartial({
              sourceCluster: 'source',
              targetCluster: 'target',
              ...key,
              sourceOffset: targetOffset + 1000,
              targetOffset,
              outcome: TranslationOutcome.TRANSLATION_OUTCOME_EXACT,
              version,
              sourceCommitTimestampMs,
              translatedAtMs: Date.now(),
            }),
          ).finish(),
          msgId: `source:target:${version.offsetsPartition}:${version.offsetsOffset}:final`,
          headers: hdrs,
        },
      ],
      { concurrency: 1 },
    );
    const message = await consumer.next({ expires: 10_000 });
    if (message === null) throw new Error('the translated event was not delivered');
    await pipeline.handleBatch([message]);
  }

  async function appliedEvent(key: GroupPartition): Promise<OffsetApplied | undefined> {
    const message = await lastOnSubject(jsm, names.stream('applied'), names.applied('source', 'target', key));
    return message === undefined ? undefined : OffsetApplied.decode(message.data);
  }

  async function committed(key: GroupPartition) {
    return (await adapter.fetchCommittedOffsets(key.group, [key.topic])).find(
      (c) => c.partition === key.partition,
    );
  }

  async function record(key: GroupPartition) {
    const entry = await jsm.streams
      .getMessage(`KV_${bucket}`, { last_by_subj: `$KV.${bucket}.${names.linkKey('source', 'target', key)}` })
      .catch(() => undefined);
    return entry === undefined ? undefined : decodeAppliedRecord(entry.data);
  }

  /** Translations delivered and not acknowledged yet. */
  async function ackPending(): Promise<number> {
    return (await jsm.consumers.info(names.stream('translated'), durable)).num_ack_pending;
  }

  return { handle, appliedEvent, committed, record, ackPending, counters, logLines };
}

describe('an application commit that races offsetsync on the target (assign() consumers)', () => {
  it('is seen right before the commit, reported as TARGET_AHEAD and kept, and the target owns the position', async () => {
    const kafka = kafkaClient(testbed.target.bootstrapServers);
    const admin = await connectedAdmin(kafka);
    const topic = uniqueName('race-topic');
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    const producer = kafka.producer();
    await producer.connect();
    onTestFinished(() => producer.disconnect());
    await producer.send({
      topic,
      messages: Array.from({ length: 100 }, (_, i) => ({ value: `record-${i}`, partition: 0 })),
    });
    const key = { group: uniqueName('race-group'), topic, partition: 0 };

    let raceOnce = false;
    const parts = await pipelineOnRealServers(async (group) => {
      if (!raceOnce) return;
      raceOnce = false;
      // The application commits its own progress after offsetsync decided and before it committed: an
      // OffsetCommit with generation -1 and no member id, which the broker takes for an empty group.
      await admin.setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '77' }] });
    });

    const v1 = { offsetsPartition: 3, offsetsOffset: 100 };
    await parts.handle(key, v1, 10);
    expect(await parts.committed(key)).toMatchObject({ offset: 10, metadata: markOf(v1) });

    const beforeTheRace = Date.now();
    raceOnce = true;
    const v2 = { offsetsPartition: 3, offsetsOffset: 200 };
    await parts.handle(key, v2, 20);

    // Kept: the target holds the application's commit, not offsetsync's.
    const onTarget = await parts.committed(key);
    expect(onTarget?.offset).toBe(77);
    expect(parseCommitMetadata(onTarget?.metadata)).toBeUndefined();
    // Reported.
    const event = await parts.appliedEvent(key);
    expect(event).toMatchObject({
      outcome: ApplyOutcome.APPLY_OUTCOME_SKIPPED,
      skipReason: SkipReason.SKIP_REASON_TARGET_AHEAD,
      version: v2,
      targetOffset: -1,
    });
    expect(event?.detail).toMatch(
      /the application committed offset 77 on the target after offsetsync decided to commit version 3:200/,
    );
    expect(await parts.ackPending()).toBe(0);
    expect(parts.counters.applicationCommitsSeen()).toEqual({ before_commit: 1, after_commit: 0 });
    expect(parts.logLines.join('')).toMatch(
      /the application committed on the target between the decision and the commit/,
    );
    // The reservation was put back with the ownership: the applied version stays 3:100.
    expect(await parts.record(key)).toMatchObject({ version: v1, targetOffset: 10 });
    expect((await parts.record(key))?.targetOwnedSinceMs).toBeGreaterThan(0);

    // A later translation of a source commit made before the ownership was seen is skipped: 77 stays.
    const v3 = { offsetsPartition: 3, offsetsOffset: 250 };
    await parts.handle(key, v3, 25, beforeTheRace);
    expect((await parts.appliedEvent(key))?.skipReason).toBe(SkipReason.SKIP_REASON_TARGET_AHEAD);
    expect((await parts.committed(key))?.offset).toBe(77);
  });
});
