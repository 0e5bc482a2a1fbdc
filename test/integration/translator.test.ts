// The translator against the real target cluster: OffsetCommitted events in, OffsetTranslated out.
import { headers } from 'nats';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import {
  AnchorStatus,
  Names,
  OffsetCommitted,
  OffsetTranslated,
  RefusalReason,
  TimestampType,
  TranslationOutcome,
} from '@offsetsync/contracts';
import { recordFingerprint } from '@offsetsync/kafka';
import { startService } from '@offsetsync/harness';
import { waitFor } from '../infra/wait.js';
import { testConfig } from '../support/config.js';
import { lastOnSubject, natsConnection } from '../support/jetstream.js';
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
});
