// Invariant 7, the target is its own floor: the version in offsetsync's commit mark on the target keeps a
// target from moving back to an older source version when the applied-versions KV bucket is lost (it has
// one replica by default) and the streams replay. The committer runs as a process against the real
// target cluster and nats-server; the tests publish OffsetTranslated events as a translator would.
import { headers, type JetStreamManager } from 'nats';
import pino from 'pino';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import {
  ApplyOutcome,
  formatCommitMetadata,
  Names,
  OffsetApplied,
  OffsetTranslated,
  ServiceRole,
  SkipReason,
  TranslationOutcome,
  type GroupPartition,
  type Version,
} from '@offsetsync/contracts';
import { JetStreamPublisher, publishAll } from '@offsetsync/jetstream';
import { KafkaAdapter } from '@offsetsync/kafka';
import { startService } from '@offsetsync/harness';
import { waitFor } from '../infra/wait.js';
import { testConfig } from '../support/config.js';
import { heartbeats, lastOnSubject, natsConnection } from '../support/jetstream.js';
import { connectedAdmin, kafkaClient } from '../support/kafka-clients.js';
import { uniqueName } from '../support/names.js';

const testbed = inject('testbed');

interface Translation {
  key: GroupPartition;
  version: Version;
  targetOffset: number;
}

async function targetAdapter(): Promise<KafkaAdapter> {
  const adapter = new KafkaAdapter({
    cluster: {
      bootstrapServers: [testbed.target.bootstrapServers],
      connectionTimeoutMs: 3000,
      requestTimeoutMs: 10_000,
    },
    clientId: 'target-floor-test',
    logger: pino({ level: 'silent' }),
  });
  await adapter.connect();
  onTestFinished(() => adapter.disconnect());
  return adapter;
}

const markOf = (version: Version) =>
  formatCommitMetadata(
    { origin: 'source', offsetsPartition: version.offsetsPartition, offsetsOffset: version.offsetsOffset },
    '',
  );

/** Publishes the translation under a message id of its own (`attempt`), so a repeat is not deduplicated. */
async function publishTranslated(
  publisher: JetStreamPublisher,
  names: Names,
  t: Translation,
  attempt = 'final',
): Promise<void> {
  const hdrs = headers();
  hdrs.set('Offsetsync-Event', 'OffsetTranslated');
  await publishAll(
    publisher,
    [
      {
        subject: names.translated('source', 'target', t.key),
        payload: OffsetTranslated.encode(
          OffsetTranslated.fromPartial({
            sourceCluster: 'source',
            targetCluster: 'target',
            ...t.key,
            sourceOffset: t.targetOffset + 1000,
            targetOffset: t.targetOffset,
            outcome: TranslationOutcome.TRANSLATION_OUTCOME_EXACT,
            version: t.version,
            sourceCommitTimestampMs: Date.now() - 1000,
            translatedAtMs: Date.now(),
          }),
        ).finish(),
        msgId: `source:target:${t.version.offsetsPartition}:${t.version.offsetsOffset}:${attempt}`,
        headers: hdrs,
      },
    ],
    { concurrency: 1 },
  );
}

/** The OffsetApplied event of `version` on the key's subject, once it is there. */
async function appliedEventFor(jsm: JetStreamManager, names: Names, key: GroupPartition, version: Version) {
  return waitFor(
    `the OffsetApplied event of version ${version.offsetsPartition}:${version.offsetsOffset}`,
    async () => {
      const message = await lastOnSubject(
        jsm,
        names.stream('applied'),
        names.applied('source', 'target', key),
      );
      if (message === undefined) return undefined;
      const event = OffsetApplied.decode(message.data);
      return event.version?.offsetsOffset === version.offsetsOffset &&
        event.version.offsetsPartition === version.offsetsPartition
        ? event
        : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 50 },
  );
}

async function committedOn(adapter: KafkaAdapter, key: GroupPartition) {
  const offsets = await adapter.fetchCommittedOffsets(key.group, [key.topic]);
  return offsets.find((o) => o.partition === key.partition);
}

async function bucketExists(jsm: JetStreamManager, stream: string): Promise<boolean> {
  try {
    await jsm.streams.info(stream);
    return true;
  } catch {
    return false;
  }
}

describe('the target is its own floor (invariant 7)', () => {
  it('never steps back when the applied-versions bucket is deleted while running or the stream is replayed by a fresh committer', async () => {
    const kafka = kafkaClient(testbed.target.bootstrapServers);
    const admin = await connectedAdmin(kafka);
    const topic = uniqueName('floor-topic');
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    // Records up to offset 100: the committer refuses offsets past the target's log end.
    const producer = kafka.producer();
    await producer.connect();
    onTestFinished(() => producer.disconnect());
    await producer.send({
      topic,
      messages: Array.from({ length: 100 }, (_, i) => ({ value: `record-${i}` })),
    });
    const key = { group: uniqueName('floor-group'), topic, partition: 0 };
    const config = testConfig(testbed, {
      committer: { target: 'target', ackWaitMs: '2s', retryBackoffMinMs: '100ms', retryBackoffMaxMs: '1s' },
    });
    const names = new Names(config.nats.subjectPrefix);
    const bucketStream = `KV_${names.bucket('applied-versions')}`;
    const committer = await startService('committer', config);
    const nc = await natsConnection(testbed.nats.url);
    const publisher = new JetStreamPublisher(nc);
    onTestFinished(() => publisher.close());
    const jsm = await nc.jetstreamManager();
    await waitFor(
      'a committer heartbeat',
      async () =>
        (await heartbeats(jsm, names, ServiceRole.SERVICE_ROLE_COMMITTER).catch(() => [])).length > 0
          ? true
          : undefined,
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    const adapter = await targetAdapter();

    const applied = { key, version: { offsetsPartition: 5, offsetsOffset: 200 }, targetOffset: 20 };
    await publishTranslated(publisher, names, applied);
    expect((await appliedEventFor(jsm, names, key, applied.version)).outcome).toBe(
      ApplyOutcome.APPLY_OUTCOME_APPLIED,
    );
    expect(await committedOn(adapter, key)).toMatchObject({ offset: 20, metadata: markOf(applied.version) });

    // The bucket is lost while the committer runs; then an older translation is delivered again.
    await jsm.streams.delete(bucketStream);
    const older = { key, version: { offsetsPartition: 5, offsetsOffset: 100 }, targetOffset: 80 };
    await publishTranslated(publisher, names, older);
    const stale = await appliedEventFor(jsm, names, key, older.version);
    expect(stale).toMatchObject({
      outcome: ApplyOutcome.APPLY_OUTCOME_SKIPPED,
      skipReason: SkipReason.SKIP_REASON_STALE_VERSION,
      targetOffset: -1,
    });
    expect(stale.detail).toMatch(/the target's commit mark holds a newer version/);
    expect(await committedOn(adapter, key)).toMatchObject({ offset: 20, metadata: markOf(applied.version) });

    // The committer said what happened, put the bucket back and works on: a newer version is applied.
    expect(await committer.log()).toMatch(/the applied-versions bucket was missing/);
    expect(await bucketExists(jsm, bucketStream)).toBe(true);
    const newer = { key, version: { offsetsPartition: 5, offsetsOffset: 300 }, targetOffset: 30 };
    await publishTranslated(publisher, names, newer);
    expect((await appliedEventFor(jsm, names, key, newer.version)).outcome).toBe(
      ApplyOutcome.APPLY_OUTCOME_APPLIED,
    );
    expect(await committedOn(adapter, key)).toMatchObject({ offset: 30, metadata: markOf(newer.version) });
    expect(committer.running()).toBe(true);

    // Replay: the committer stops, the bucket and its durable consumer are gone, and the stream's state for
    // the key is an older translation (a translator republished it). A fresh committer replays it.
    await committer.stop();
    const replayed = { key, version: { offsetsPartition: 5, offsetsOffset: 150 }, targetOffset: 90 };
    await publishTranslated(publisher, names, replayed);
    await jsm.streams.delete(bucketStream);
    await jsm.consumers.delete(names.stream('translated'), 'committer-source-target');
    await startService('committer', config);
    const replayedStale = await appliedEventFor(jsm, names, key, replayed.version);
    expect(replayedStale).toMatchObject({
      outcome: ApplyOutcome.APPLY_OUTCOME_SKIPPED,
      skipReason: SkipReason.SKIP_REASON_STALE_VERSION,
    });
    expect(replayedStale.detail).toMatch(/the target's commit mark holds a newer version/);
    expect(await committedOn(adapter, key)).toMatchObject({ offset: 30, metadata: markOf(newer.version) });
  });
});
