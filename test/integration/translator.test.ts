// The translator against the real target cluster: OffsetCommitted events in, OffsetTranslated out.
import { headers } from 'nats';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import {
  AnchorStatus,
  Names,
  OffsetCommitted,
  OffsetTranslated,
  RefusalReason,
  ServiceRole,
  TimestampType,
  TranslationOutcome,
} from '@offsetsync/contracts';
import { recordFingerprint } from '@offsetsync/kafka';
import { startService } from '@offsetsync/harness';
import { provisionStreams, streamSpecs } from '@offsetsync/jetstream';
import { waitFor } from '../infra/wait.js';
import { testConfig } from '../support/config.js';
import { heartbeats, lastOnSubject, natsConnection } from '../support/jetstream.js';
import { connectedAdmin, kafkaClient } from '../support/kafka-clients.js';
import { uniqueName } from '../support/names.js';

const testbed = inject('testbed');

interface Written {
  key: string;
  value: string;
  timestamp: number;
}

async function createTargetTopic(topic: string, configEntries: { name: string; value: string }[] = []) {
  const kafka = kafkaClient(testbed.target.bootstrapServers);
  const admin = await connectedAdmin(kafka);
  await admin.createTopics({ topics: [{ topic, numPartitions: 1, configEntries }], waitForLeaders: true });
  const producer = kafka.producer();
  await producer.connect();
  onTestFinished(() => producer.disconnect());
  return async (records: Written[]) => {
    await producer.send({
      topic,
      messages: records.map((r) => ({
        key: r.key,
        value: r.value,
        timestamp: String(r.timestamp),
        partition: 0,
      })),
    });
  };
}

function anchorOf(record: Written, sourceOffset: number) {
  return {
    offset: sourceOffset,
    timestampMs: record.timestamp,
    timestampType: TimestampType.TIMESTAMP_TYPE_CREATE_TIME,
    fingerprint: recordFingerprint(Buffer.from(record.key), Buffer.from(record.value)),
    keySize: record.key.length,
    valueSize: record.value.length,
  };
}

async function setUp() {
  const config = testConfig(testbed, {
    translator: { target: 'target', pendingRetryMinMs: '50ms', pendingRetryMaxMs: '500ms' },
  });
  const names = new Names(config.nats.subjectPrefix);
  const nc = await natsConnection(testbed.nats.url);
  const jsm = await nc.jetstreamManager();
  await startService('translator', config);
  // The translator provisions the streams; wait for them before publishing.
  await waitFor('the committed stream', () => jsm.streams.info(names.stream('committed')).then(() => true), {
    timeoutMs: 20_000,
  });
  const js = nc.jetstream();
  const publish = async (event: OffsetCommitted) => {
    const hdrs = headers();
    hdrs.set('Offsetsync-Event', 'OffsetCommitted');
    await js.publish(names.committed('source', event), OffsetCommitted.encode(event).finish(), {
      headers: hdrs,
    });
  };
  const translated = (event: OffsetCommitted, accept: (t: OffsetTranslated) => boolean) =>
    waitFor(
      'an OffsetTranslated event',
      async () => {
        const message = await lastOnSubject(
          jsm,
          names.stream('translated'),
          names.translated('source', 'target', event),
        );
        if (message === undefined) return undefined;
        const decoded = OffsetTranslated.decode(message.data);
        return accept(decoded) ? decoded : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 50 },
    );
  return { publish, translated };
}

function records(count: number, base: number): Written[] {
  return Array.from({ length: count }, (_, i) => ({
    key: `key-${i}`,
    value: `value-${i}`,
    timestamp: base + Math.floor(i / 3),
  }));
}

describe('translator', () => {
  it('translates exactly when the records are on the target, though their offsets differ', async () => {
    const topic = uniqueName('tr-exact');
    const write = await createTargetTopic(topic);
    const base = Date.now() - 100_000;
    // The target has records of its own first: the copies are 7 offsets later than on the source.
    await write(Array.from({ length: 7 }, (_, i) => ({ key: `own-${i}`, value: 'x', timestamp: base - 10 })));
    const source = records(20, base);
    await write(source);
    const { publish, translated } = await setUp();

    const event = OffsetCommitted.fromPartial({
      sourceCluster: 'source',
      group: uniqueName('g'),
      topic,
      partition: 0,
      committedOffset: 12,
      commitTimestampMs: Date.now(),
      version: { offsetsPartition: 1, offsetsOffset: 100 },
      anchorStatus: AnchorStatus.ANCHOR_STATUS_RESOLVED,
      lastConsumed: anchorOf(source[11]!, 11),
      nextRecord: anchorOf(source[12]!, 12),
      observedAtMs: Date.now(),
    });
    await publish(event);
    const result = await translated(event, () => true);
    expect(result).toMatchObject({
      outcome: TranslationOutcome.TRANSLATION_OUTCOME_EXACT,
      sourceOffset: 12,
      targetOffset: 19,
      version: { offsetsPartition: 1, offsetsOffset: 100 },
    });
  });

  it('stays pending while the record has not arrived, never committing the log end, then translates exactly', async () => {
    const topic = uniqueName('tr-pending');
    const write = await createTargetTopic(topic);
    const base = Date.now() - 100_000;
    const source = records(10, base);
    await write(source.slice(0, 4));
    const { publish, translated } = await setUp();

    const event = OffsetCommitted.fromPartial({
      sourceCluster: 'source',
      group: uniqueName('g'),
      topic,
      partition: 0,
      committedOffset: 8,
      commitTimestampMs: Date.now(),
      version: { offsetsPartition: 0, offsetsOffset: 5 },
      anchorStatus: AnchorStatus.ANCHOR_STATUS_RESOLVED,
      lastConsumed: anchorOf(source[7]!, 7),
      nextRecord: anchorOf(source[8]!, 8),
      observedAtMs: Date.now(),
    });
    await publish(event);
    const pending = await translated(event, (t) => t.attempts >= 2);
    expect(pending).toMatchObject({
      outcome: TranslationOutcome.TRANSLATION_OUTCOME_PENDING,
      targetOffset: -1,
    });

    await write(source.slice(4));
    const exact = await translated(
      event,
      (t) => t.outcome !== TranslationOutcome.TRANSLATION_OUTCOME_PENDING,
    );
    expect(exact).toMatchObject({ outcome: TranslationOutcome.TRANSLATION_OUTCOME_EXACT, targetOffset: 8 });
  });

  it('refuses a target topic with LogAppendTime timestamps and commits nothing', async () => {
    const topic = uniqueName('tr-lat');
    const write = await createTargetTopic(topic, [
      { name: 'message.timestamp.type', value: 'LogAppendTime' },
    ]);
    const source = records(5, Date.now() - 100_000);
    await write(source);
    const { publish, translated } = await setUp();
    const event = OffsetCommitted.fromPartial({
      sourceCluster: 'source',
      group: uniqueName('g'),
      topic,
      partition: 0,
      committedOffset: 2,
      version: { offsetsPartition: 0, offsetsOffset: 1 },
      anchorStatus: AnchorStatus.ANCHOR_STATUS_RESOLVED,
      lastConsumed: anchorOf(source[1]!, 1),
      nextRecord: anchorOf(source[2]!, 2),
      observedAtMs: Date.now(),
    });
    await publish(event);
    const result = await translated(event, () => true);
    expect(result).toMatchObject({
      outcome: TranslationOutcome.TRANSLATION_OUTCOME_REFUSED,
      refusalReason: RefusalReason.REFUSAL_REASON_LOG_APPEND_TIME_TARGET,
      targetOffset: -1,
    });
  });

  it('terminates and counts poison (undecodable, no type header, a negative partition) and translates the valid events of its batch, a 10,000-character group among them, on their first delivery', async () => {
    const topic = uniqueName('tr-poison');
    const write = await createTargetTopic(topic);
    const base = Date.now() - 100_000;
    await write(Array.from({ length: 5 }, (_, i) => ({ key: `own-${i}`, value: 'x', timestamp: base - 10 })));
    const source = records(20, base);
    await write(source);

    const config = testConfig(testbed, {
      translator: { target: 'target', pendingRetryMinMs: '50ms', pendingRetryMaxMs: '500ms' },
    });
    const names = new Names(config.nats.subjectPrefix);
    const nc = await natsConnection(testbed.nats.url);
    const jsm = await nc.jetstreamManager();
    const js = nc.jetstream();
    await provisionStreams(jsm, streamSpecs(names, 1));

    const prefix = uniqueName('poison');
    const commit = (group: string, partition: number, offset: number, version: number) =>
      OffsetCommitted.fromPartial({
        sourceCluster: 'source',
        group,
        topic,
        partition,
        committedOffset: offset,
        commitTimestampMs: Date.now(),
        version: { offsetsPartition: 1, offsetsOffset: version },
        anchorStatus: AnchorStatus.ANCHOR_STATUS_RESOLVED,
        lastConsumed: anchorOf(source[offset - 1]!, offset - 1),
        nextRecord: anchorOf(source[offset]!, offset),
        observedAtMs: Date.now(),
      });
    const valid = [
      commit(`${prefix}-a`, 0, 12, 1),
      commit(`${prefix}-${'g'.repeat(10_000)}`, 0, 14, 2),
      commit(`${prefix}-b`, 0, 9, 3),
    ];
    const typed = (type: string | undefined) => {
      const h = headers();
      if (type !== undefined) h.set('Offsetsync-Event', type);
      return { headers: h };
    };
    const poisonKey = (name: string) => ({ group: `${prefix}-${name}`, topic, partition: 0 });
    // Published before the translator starts, so its first pull takes them all as one batch, poison
    // between the valid events.
    const publishValid = (event: OffsetCommitted) =>
      js.publish(
        names.committed('source', event),
        OffsetCommitted.encode(event).finish(),
        typed('OffsetCommitted'),
      );
    await publishValid(valid[0]!);
    await js.publish(
      names.committed('source', poisonKey('undecodable')),
      new Uint8Array([0xff, 0xff, 0xff, 0xff]),
      typed('OffsetCommitted'),
    );
    await publishValid(valid[1]!);
    const untyped = commit(`${prefix}-untyped`, 0, 10, 4);
    await js.publish(
      names.committed('source', untyped),
      OffsetCommitted.encode(untyped).finish(),
      typed(undefined),
    );
    // Names refuses a negative partition, so the event goes on its key's subject with partition 0.
    const negative = { ...commit(`${prefix}-negative`, 0, 11, 5), partition: -1 };
    await js.publish(
      names.committed('source', poisonKey('negative')),
      OffsetCommitted.encode(negative).finish(),
      typed('OffsetCommitted'),
    );
    await publishValid(valid[2]!);

    await startService('translator', config);
    for (const event of valid) {
      const message = await waitFor(
        `the translation of ${event.group.slice(0, 40)}`,
        () => lastOnSubject(jsm, names.stream('translated'), names.translated('source', 'target', event)),
        { timeoutMs: 30_000, intervalMs: 100 },
      );
      expect(OffsetTranslated.decode(message.data)).toMatchObject({
        group: event.group,
        outcome: TranslationOutcome.TRANSLATION_OUTCOME_EXACT,
        targetOffset: event.committedOffset + 5,
      });
    }
    // Nothing was translated of the poison.
    for (const key of [poisonKey('undecodable'), poisonKey('untyped'), poisonKey('negative')])
      expect(
        await lastOnSubject(jsm, names.stream('translated'), names.translated('source', 'target', key)),
      ).toBeUndefined();

    const beat = await waitFor(
      'a heartbeat counting the poison',
      async () => {
        const [b] = await heartbeats(jsm, names, ServiceRole.SERVICE_ROLE_TRANSLATOR).catch(() => []);
        const counts = b?.progress?.eventsByOutcome ?? {};
        return Object.values(counts).reduce((sum, n) => sum + n, 0) >= 6 ? b : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(beat.progress?.eventsByOutcome).toEqual({ exact: 3, undecodable: 2, malformed: 1 });
    // One problem for reading commits: the last unusable message, naming its key's subject.
    expect(beat.problems.map((p) => p.code)).toEqual(['DECODE_ERROR']);
    expect(beat.problems[0]?.resource).toMatch(/^SUBJECT:.*\.committed\.source\./);

    // Every message settled on its first delivery: the poison terminated, none handed back.
    const consumer = await waitFor(
      'no committed event left pending',
      async () => {
        const info = await jsm.consumers.info(names.stream('committed'), 'translator-source-target');
        return info.num_ack_pending === 0 ? info : undefined;
      },
      { timeoutMs: 5_000, intervalMs: 100 },
    );
    expect(consumer.num_redelivered).toBe(0);
    expect(consumer.delivered.consumer_seq).toBe(6);
  });
});
