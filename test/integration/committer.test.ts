// The committer against the real target cluster and nats-server, run as separate processes. The tests
// publish the OffsetTranslated events themselves, as a translator would.
import { headers, type JetStreamManager } from 'nats';
import pino from 'pino';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import {
  ApplyOutcome,
  formatCommitMetadata,
  Names,
  OffsetApplied,
  OffsetTranslated,
  parseCommitMetadata,
  ServiceRole,
  SkipReason,
  TranslationOutcome,
  type GroupPartition,
  type Version,
} from '@offsetsync/contracts';
import {
  JetStreamPublisher,
  provisionStreams,
  publishAll,
  streamSpecs,
  type StreamMessage,
} from '@offsetsync/jetstream';
import { KafkaAdapter } from '@offsetsync/kafka';
import { startService } from '@offsetsync/harness';
import { freePort } from '../infra/free-port.js';
import { waitFor } from '../infra/wait.js';
import { testConfig } from '../support/config.js';
import { heartbeats, lastOnSubject, natsConnection } from '../support/jetstream.js';
import { connectedAdmin, kafkaClient } from '../support/kafka-clients.js';
import { uniqueName } from '../support/names.js';

const testbed = inject('testbed');
const quiet = pino({ level: 'silent' });

interface Translation {
  key: GroupPartition;
  version: Version;
  targetOffset: number;
  sourceCommitTimestampMs?: number;
  outcome?: TranslationOutcome;
  /** The link the body names; default source -> target, the link of the subject. */
  bodyLink?: { source: string; target: string };
  /** The key whose subject the event is published on; default `key`. */
  subjectKey?: GroupPartition;
}

async function targetAdapter(): Promise<KafkaAdapter> {
  const adapter = new KafkaAdapter({
    cluster: {
      bootstrapServers: [testbed.target.bootstrapServers],
      connectionTimeoutMs: 3000,
      requestTimeoutMs: 10_000,
    },
    clientId: 'committer-test',
    logger: quiet,
  });
  await adapter.connect();
  onTestFinished(() => adapter.disconnect());
  return adapter;
}

/**
 * Records per partition of the topics whose tests commit arbitrary offsets: the committer refuses an offset
 * above the target's log end, so every offset a test commits must lie within the records it wrote.
 */
const RECORDS_PER_PARTITION = 1000;

async function createTargetTopic(partitions: number, records = 0): Promise<string> {
  const topic = uniqueName('com-topic');
  const kafka = kafkaClient(testbed.target.bootstrapServers);
  const admin = await connectedAdmin(kafka);
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true });
  if (records > 0) {
    const producer = kafka.producer();
    await producer.connect();
    onTestFinished(() => producer.disconnect());
    for (let partition = 0; partition < partitions; partition++) {
      await producer.send({
        topic,
        messages: Array.from({ length: records }, (_, i) => ({ value: `record-${i}`, partition })),
      });
    }
  }
  return topic;
}

/** A committer config for the test bed; its own subject prefix, so its streams and KV are private. */
function committerConfig(committer: Record<string, unknown> = {}) {
  const config = testConfig(testbed, {
    committer: { target: 'target', activeGroupRetryMs: '1s', ackWaitMs: '2s', ...committer },
  });
  return { config, names: new Names(config.nats.subjectPrefix) };
}

async function jetstream(): Promise<{ publisher: JetStreamPublisher; jsm: JetStreamManager }> {
  const nc = await natsConnection(testbed.nats.url);
  const publisher = new JetStreamPublisher(nc);
  onTestFinished(() => publisher.close());
  return { publisher, jsm: await nc.jetstreamManager() };
}

async function committersRunning(jsm: JetStreamManager, names: Names, count: number): Promise<void> {
  await waitFor(
    `${count} committer heartbeat(s) without problems`,
    async () => {
      const beats = await heartbeats(jsm, names, ServiceRole.SERVICE_ROLE_COMMITTER).catch(() => []);
      return beats.length >= count && beats.every((b) => b.problems.length === 0) ? true : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  );
}

function translatedMessage(
  names: Names,
  t: Translation,
  msgId?: string,
  traceparent?: string,
): StreamMessage {
  const hdrs = headers();
  hdrs.set('Offsetsync-Event', 'OffsetTranslated');
  if (traceparent !== undefined) hdrs.set('traceparent', traceparent);
  return {
    subject: names.translated('source', 'target', t.subjectKey ?? t.key),
    payload: OffsetTranslated.encode(
      OffsetTranslated.fromPartial({
        sourceCluster: t.bodyLink?.source ?? 'source',
        targetCluster: t.bodyLink?.target ?? 'target',
        ...t.key,
        sourceOffset: t.targetOffset + 1000,
        targetOffset: t.targetOffset,
        outcome: t.outcome ?? TranslationOutcome.TRANSLATION_OUTCOME_EXACT,
        version: t.version,
        sourceCommitTimestampMs: t.sourceCommitTimestampMs ?? Date.now() - 1000,
        translatedAtMs: Date.now(),
      }),
    ).finish(),
    msgId: msgId ?? `source:target:${t.version.offsetsPartition}:${t.version.offsetsOffset}`,
    headers: hdrs,
  };
}

async function publishTranslated(
  publisher: JetStreamPublisher,
  names: Names,
  translations: readonly Translation[],
) {
  await publishAll(
    publisher,
    translations.map((t) => translatedMessage(names, t)),
    { concurrency: 64 },
  );
}

/** Waits for the OffsetApplied event of `version` on the key's subject. */
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
      return event.version?.offsetsPartition === version.offsetsPartition &&
        event.version.offsetsOffset === version.offsetsOffset
        ? { event, headers: message.headers }
        : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 20 },
  );
}

async function committedOn(adapter: KafkaAdapter, key: GroupPartition) {
  const offsets = await adapter.fetchCommittedOffsets(key.group, [key.topic]);
  return offsets.find((o) => o.partition === key.partition);
}

const markOf = (version: Version) =>
  formatCommitMetadata(
    { origin: 'source', offsetsPartition: version.offsetsPartition, offsetsOffset: version.offsetsOffset },
    '',
  );

/** Waits until every key's committed offset on the target is `expected`'s offset with its version's mark. */
async function converged(adapter: KafkaAdapter, expected: readonly Translation[], timeoutMs = 60_000) {
  await waitFor(
    'the target to hold the newest version of every key',
    async () => {
      const groups = [...new Set(expected.map((t) => t.key.group))];
      const committed = new Map<string, { offset: number; metadata: string | null }>();
      for (const group of groups) {
        for (const c of await adapter.fetchCommittedOffsets(group))
          committed.set(`${group}/${c.topic}/${c.partition}`, c);
      }
      const done = expected.every((t) => {
        const c = committed.get(`${t.key.group}/${t.key.topic}/${t.key.partition}`);
        return c?.offset === t.targetOffset && c.metadata === markOf(t.version);
      });
      return done ? true : undefined;
    },
    { timeoutMs, intervalMs: 250 },
  );
}

/** `versions` translations of each key with rising versions and arbitrary (sometimes falling) offsets. */
function versionStream(keys: readonly GroupPartition[], versions: number): Translation[][] {
  const groups = [...new Set(keys.map((k) => k.group))];
  return Array.from({ length: versions }, (_, round) =>
    keys.map((key, k) => ({
      key,
      // One offsets-topic partition per group, as Kafka does; offsets rise round by round.
      version: { offsetsPartition: groups.indexOf(key.group), offsetsOffset: 1000 + round * keys.length + k },
      targetOffset: Math.floor(Math.random() * RECORDS_PER_PARTITION),
    })),
  );
}

function shuffled<T>(items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

describe('committer', () => {
  it('commits an exact translation with the offsetsync mark and publishes APPLIED in the same trace', async () => {
    const topic = await createTargetTopic(1, 10);
    const key = { group: uniqueName('com-exact'), topic, partition: 0 };
    const { config, names } = committerConfig();
    await startService('committer', config);
    const { publisher, jsm } = await jetstream();
    await committersRunning(jsm, names, 1);

    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const version = { offsetsPartition: 12, offsetsOffset: 3456 };
    const sourceCommitTimestampMs = Date.now() - 2000;
    await publishAll(
      publisher,
      [
        translatedMessage(
          names,
          { key, version, targetOffset: 7, sourceCommitTimestampMs },
          undefined,
          `00-${traceId}-00f067aa0ba902b7-01`,
        ),
      ],
      { concurrency: 1 },
    );
    const { event, headers: eventHeaders } = await appliedEventFor(jsm, names, key, version);
    expect(event).toMatchObject({
      sourceCluster: 'source',
      targetCluster: 'target',
      ...key,
      outcome: ApplyOutcome.APPLY_OUTCOME_APPLIED,
      skipReason: SkipReason.SKIP_REASON_UNSPECIFIED,
      targetOffset: 7,
      exact: true,
      sourceCommitTimestampMs,
    });
    expect(event.appliedAtMs).toBeGreaterThanOrEqual(sourceCommitTimestampMs);
    expect(eventHeaders.get('Offsetsync-Event')).toBe('OffsetApplied');
    expect(eventHeaders.get('traceparent')).toMatch(new RegExp(`^00-${traceId}-`));

    const committed = await committedOn(await targetAdapter(), key);
    expect(committed?.offset).toBe(7);
    expect(parseCommitMetadata(committed?.metadata)?.mark).toEqual({ origin: 'source', ...version });
  });

  it('skips an older version delivered after a newer one, and applies a rewind', async () => {
    const topic = await createTargetTopic(1, 100);
    const key = { group: uniqueName('com-stale'), topic, partition: 0 };
    const { config, names } = committerConfig();
    await startService('committer', config);
    const { publisher, jsm } = await jetstream();
    await committersRunning(jsm, names, 1);
    const adapter = await targetAdapter();

    const newer = { key, version: { offsetsPartition: 3, offsetsOffset: 200 }, targetOffset: 50 };
    await publishTranslated(publisher, names, [newer]);
    await appliedEventFor(jsm, names, key, newer.version);

    const older = { key, version: { offsetsPartition: 3, offsetsOffset: 100 }, targetOffset: 80 };
    await publishTranslated(publisher, names, [older]);
    const stale = await appliedEventFor(jsm, names, key, older.version);
    expect(stale.event).toMatchObject({
      outcome: ApplyOutcome.APPLY_OUTCOME_SKIPPED,
      skipReason: SkipReason.SKIP_REASON_STALE_VERSION,
      targetOffset: -1,
    });
    expect(await committedOn(adapter, key)).toMatchObject({ offset: 50, metadata: markOf(newer.version) });

    // The application was rewound on the source: a newer commit with a lower offset.
    const rewind = { key, version: { offsetsPartition: 3, offsetsOffset: 300 }, targetOffset: 5 };
    await publishTranslated(publisher, names, [rewind]);
    const applied = await appliedEventFor(jsm, names, key, rewind.version);
    expect(applied.event.outcome).toBe(ApplyOutcome.APPLY_OUTCOME_APPLIED);
    expect(await committedOn(adapter, key)).toMatchObject({ offset: 5, metadata: markOf(rewind.version) });
  });

  it('converges on the newest version per key with two committers and 200 versions published out of order', async () => {
    const topic = await createTargetTopic(5, RECORDS_PER_PARTITION);
    const groupPrefix = uniqueName('com-two');
    const keys = Array.from({ length: 20 }, (_, i) => ({
      group: `${groupPrefix}-${i % 4}`,
      topic,
      partition: i % 5,
    }));
    const { config, names } = committerConfig();
    await startService('committer', { ...config, instance: { id: 'committer-a' } });
    await startService('committer', { ...config, instance: { id: 'committer-b' } });
    const { publisher, jsm } = await jetstream();
    await committersRunning(jsm, names, 2);

    const rounds = versionStream(keys, 10);
    const newest = rounds.at(-1)!;
    await publishTranslated(publisher, names, shuffled(rounds.flat()));
    // The translated stream keeps only the last event per key; a translator re-publishes the newest state
    // (here under a new message id, so it is not dropped as a duplicate).
    await publishAll(
      publisher,
      newest.map((t) =>
        translatedMessage(names, t, `again:${t.version.offsetsPartition}:${t.version.offsetsOffset}`),
      ),
      { concurrency: 64 },
    );

    const adapter = await targetAdapter();
    await converged(adapter, newest);
    const beats = await heartbeats(jsm, names, ServiceRole.SERVICE_ROLE_COMMITTER);
    expect(beats.map((b) => b.instanceId).sort()).toEqual(['committer-a', 'committer-b']);
    expect(beats.every((b) => b.problems.length === 0)).toBe(true);
  });

  it('skips a group with a live consumer on the target, keeps its offset, and applies a newer version after it left', async () => {
    // Records up to offset 10, so the consumer finds the committed positions valid.
    const topic = await createTargetTopic(1, 10);
    const key = { group: uniqueName('com-active'), topic, partition: 0 };
    const { config, names } = committerConfig({ activeGroupRetryMs: '1s' });
    const committer = await startService('committer', config);
    const { publisher, jsm } = await jetstream();
    await committersRunning(jsm, names, 1);
    const adapter = await targetAdapter();

    const v1 = { key, version: { offsetsPartition: 1, offsetsOffset: 10 }, targetOffset: 3 };
    await publishTranslated(publisher, names, [v1]);
    await appliedEventFor(jsm, names, key, v1.version);

    // The application starts on the target: a live member of the group, which never commits.
    const consumer = kafkaClient(testbed.target.bootstrapServers).consumer({ groupId: key.group });
    await consumer.connect();
    onTestFinished(() => consumer.disconnect());
    await consumer.subscribe({ topic });
    await consumer.run({ autoCommit: false, eachMessage: () => Promise.resolve() });
    await waitFor(
      'the group to become stable on the target',
      async () => ((await adapter.describeGroup(key.group)).state === 'Stable' ? true : undefined),
      { timeoutMs: 30_000, intervalMs: 100 },
    );

    const v2 = { key, version: { offsetsPartition: 1, offsetsOffset: 20 }, targetOffset: 6 };
    await publishTranslated(publisher, names, [v2]);
    const skipped = await appliedEventFor(jsm, names, key, v2.version);
    expect(skipped.event).toMatchObject({
      outcome: ApplyOutcome.APPLY_OUTCOME_SKIPPED,
      skipReason: SkipReason.SKIP_REASON_ACTIVE_ON_TARGET,
    });
    expect(await committedOn(adapter, key)).toMatchObject({ offset: 3, metadata: markOf(v1.version) });
    expect(await committer.log()).toMatch(/group has live members on the target/);

    await consumer.disconnect();
    await waitFor(
      'the group to be empty and the active-group wait to be over',
      async () => {
        const { state } = await adapter.describeGroup(key.group);
        return state === 'Empty' && Date.now() > skipped.event.appliedAtMs + 1000 ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    const v3 = { key, version: { offsetsPartition: 1, offsetsOffset: 30 }, targetOffset: 9 };
    await publishTranslated(publisher, names, [v3]);
    const applied = await appliedEventFor(jsm, names, key, v3.version);
    expect(applied.event.outcome).toBe(ApplyOutcome.APPLY_OUTCOME_APPLIED);
    expect(await committedOn(adapter, key)).toMatchObject({ offset: 9, metadata: markOf(v3.version) });
  });

  it("keeps the application's own commit on the target against an older source commit, not against a later one", async () => {
    const topic = await createTargetTopic(1, 20);
    const key = { group: uniqueName('com-owned'), topic, partition: 0 };
    const { config, names } = committerConfig();
    await startService('committer', config);
    const { publisher, jsm } = await jetstream();
    await committersRunning(jsm, names, 1);
    const adapter = await targetAdapter();

    const v1 = {
      key,
      version: { offsetsPartition: 2, offsetsOffset: 10 },
      targetOffset: 5,
      sourceCommitTimestampMs: Date.now() - 10_000,
    };
    await publishTranslated(publisher, names, [v1]);
    await appliedEventFor(jsm, names, key, v1.version);

    // The application, now running on the target, commits its own progress there (no offsetsync mark).
    const sourceCommitBeforeApp = Date.now() - 1000;
    const admin = await connectedAdmin(kafkaClient(testbed.target.bootstrapServers));
    await admin.setOffsets({ groupId: key.group, topic, partitions: [{ partition: 0, offset: '8' }] });
    const appCommit = await committedOn(adapter, key);
    expect(appCommit?.offset).toBe(8);
    expect(parseCommitMetadata(appCommit?.metadata)).toBeUndefined();

    // An older source commit (made before the application's) arrives late: it must not win.
    const v2 = {
      key,
      version: { offsetsPartition: 2, offsetsOffset: 20 },
      targetOffset: 6,
      sourceCommitTimestampMs: sourceCommitBeforeApp,
    };
    await publishTranslated(publisher, names, [v2]);
    const skipped = await appliedEventFor(jsm, names, key, v2.version);
    expect(skipped.event).toMatchObject({
      outcome: ApplyOutcome.APPLY_OUTCOME_SKIPPED,
      skipReason: SkipReason.SKIP_REASON_TARGET_AHEAD,
    });
    expect((await committedOn(adapter, key))?.offset).toBe(8);

    // The application commits on the source again, after the ownership was seen: the source wins again.
    const v3 = {
      key,
      version: { offsetsPartition: 2, offsetsOffset: 30 },
      targetOffset: 12,
      sourceCommitTimestampMs: Date.now() + 1,
    };
    await publishTranslated(publisher, names, [v3]);
    const applied = await appliedEventFor(jsm, names, key, v3.version);
    expect(applied.event.outcome).toBe(ApplyOutcome.APPLY_OUTCOME_APPLIED);
    expect(await committedOn(adapter, key)).toMatchObject({ offset: 12, metadata: markOf(v3.version) });
  });

  it('converges after the committer is killed with SIGKILL mid-stream and started again', async () => {
    const topic = await createTargetTopic(5, RECORDS_PER_PARTITION);
    const groupPrefix = uniqueName('com-kill');
    const keys = Array.from({ length: 20 }, (_, i) => ({
      group: `${groupPrefix}-${i % 4}`,
      topic,
      partition: i % 5,
    }));
    const { config, names } = committerConfig({ ackWaitMs: '2s' });
    const first = await startService('committer', config);
    const { publisher, jsm } = await jetstream();
    await committersRunning(jsm, names, 1);

    const rounds = versionStream(keys, 20);
    for (const round of rounds.slice(0, 10)) await publishTranslated(publisher, names, round);
    await waitFor(
      'the first applied events',
      async () => {
        const [beat] = await heartbeats(jsm, names, ServiceRole.SERVICE_ROLE_COMMITTER);
        return (beat?.progress?.eventsByOutcome.applied ?? 0) > 0 ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 20 },
    );
    for (const [i, round] of rounds.slice(10).entries()) {
      await publishTranslated(publisher, names, round);
      if (i === 2) await first.kill();
    }
    await startService('committer', config);
    await converged(await targetAdapter(), rounds.at(-1)!);
  });

  it('keeps running and reports KAFKA_UNREACHABLE in its heartbeats while the target cannot be reached', async () => {
    const closedPort = await freePort();
    const { config, names } = committerConfig({ retryBackoffMinMs: '200ms', retryBackoffMaxMs: '1s' });
    (config.clusters as Record<string, unknown>).target = {
      bootstrapServers: [`127.0.0.1:${closedPort}`],
      connectionTimeoutMs: '500ms',
      requestTimeoutMs: '2s',
    };
    const committer = await startService('committer', config);
    const { jsm } = await jetstream();
    const problem = await waitFor(
      'a heartbeat reporting the unreachable target',
      async () => {
        const [beat] = await heartbeats(jsm, names, ServiceRole.SERVICE_ROLE_COMMITTER).catch(() => []);
        return beat?.problems.find((p) => p.code === 'KAFKA_UNREACHABLE');
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    expect(problem.detail).toMatch(/connect/i);
    expect(await committer.log()).toMatch(/cannot reach the target cluster; retrying/);
    expect(
      await Promise.race([
        committer.exited,
        new Promise((resolve) => setTimeout(() => resolve('running'), 500)),
      ]),
    ).toBe('running');
  });

  it('refuses, counts and reports an event of another link, one on another key subject, an offset past the log end and poison (undecodable, a negative partition), applying the valid events of the batch (a 10,000-character group among them) on their first delivery', async () => {
    // Two partitions of 10 records each: log end offset 10.
    const topic = await createTargetTopic(2, 10);
    const prefix = uniqueName('com-refuse');
    const key = (name: string, partition: number) => ({ group: `${prefix}-${name}`, topic, partition });
    const valid = [
      { key: key('valid-a', 0), version: { offsetsPartition: 1, offsetsOffset: 10 }, targetOffset: 4 },
      // At the log end: the position after the last record, valid.
      { key: key('valid-b', 1), version: { offsetsPartition: 2, offsetsOffset: 10 }, targetOffset: 10 },
      {
        key: key('g'.repeat(10_000), 0),
        version: { offsetsPartition: 6, offsetsOffset: 10 },
        targetOffset: 5,
      },
    ];
    const foreign = {
      key: key('foreign', 0),
      version: { offsetsPartition: 3, offsetsOffset: 10 },
      targetOffset: 3,
      bodyLink: { source: 'source', target: 'elsewhere' },
    };
    const misplaced = {
      key: key('misplaced', 0),
      subjectKey: key('carrier', 0),
      version: { offsetsPartition: 4, offsetsOffset: 10 },
      targetOffset: 2,
    };
    const beyond = {
      key: key('beyond', 1),
      version: { offsetsPartition: 5, offsetsOffset: 10 },
      targetOffset: 11,
    };

    const { config, names } = committerConfig();
    const { publisher, jsm } = await jetstream();
    // Published before the committer starts, so its first pull takes them as one batch.
    await provisionStreams(jsm, streamSpecs(names, 1));
    // Poison: a payload that is no OffsetTranslated, and a body with a negative partition on the subject
    // of partition 0.
    const garbage = {
      ...translatedMessage(names, {
        key: key('garbage', 0),
        version: { offsetsPartition: 7, offsetsOffset: 10 },
        targetOffset: 1,
      }),
      payload: new Uint8Array([0xff, 0xff, 0xff, 0xff]),
    };
    const negative = translatedMessage(names, {
      key: key('negative', -1),
      subjectKey: key('negative', 0),
      version: { offsetsPartition: 8, offsetsOffset: 10 },
      targetOffset: 1,
    });
    await publishAll(
      publisher,
      [
        translatedMessage(names, valid[0]!),
        translatedMessage(names, foreign),
        garbage,
        translatedMessage(names, misplaced),
        translatedMessage(names, valid[2]!),
        negative,
        translatedMessage(names, beyond),
        translatedMessage(names, valid[1]!),
      ],
      { concurrency: 1 },
    );
    const committer = await startService('committer', config);

    const beat = await waitFor(
      'a heartbeat counting every event of the batch',
      async () => {
        const [b] = await heartbeats(jsm, names, ServiceRole.SERVICE_ROLE_COMMITTER).catch(() => []);
        const counts = b?.progress?.eventsByOutcome ?? {};
        return Object.values(counts).reduce((sum, n) => sum + n, 0) >= 8 ? b : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(beat.progress?.eventsByOutcome).toEqual({
      applied: 3,
      malformed: 2,
      refused_foreign_link: 1,
      refused_subject_mismatch: 1,
      skipped_out_of_log_bounds: 1,
    });
    // One problem per kind, each naming the subject of the event it refused.
    const subject = (k: GroupPartition) => `SUBJECT:${names.translated('source', 'target', k)}`;
    expect(beat.problems.map((p) => `${p.code} ${p.resource}`).sort()).toEqual(
      [
        `OFFSET_OUT_OF_LOG_BOUNDS ${subject(beyond.key)}`,
        `EVENT_REFUSED ${subject(foreign.key)}`,
        `EVENT_REFUSED ${subject(misplaced.subjectKey)}`,
      ].sort(),
    );
    expect(beat.problems.find((p) => p.code === 'OFFSET_OUT_OF_LOG_BOUNDS')?.detail).toContain(
      'target offset 11 is above the log end offset 10',
    );

    const adapter = await targetAdapter();
    for (const t of valid) {
      expect((await appliedEventFor(jsm, names, t.key, t.version)).event.outcome).toBe(
        ApplyOutcome.APPLY_OUTCOME_APPLIED,
      );
      expect(await committedOn(adapter, t.key)).toMatchObject({
        offset: t.targetOffset,
        metadata: markOf(t.version),
      });
    }
    const skipped = await appliedEventFor(jsm, names, beyond.key, beyond.version);
    expect(skipped.event).toMatchObject({
      outcome: ApplyOutcome.APPLY_OUTCOME_SKIPPED,
      skipReason: SkipReason.SKIP_REASON_OUT_OF_LOG_BOUNDS,
      targetOffset: -1,
    });
    for (const k of [foreign.key, misplaced.key, misplaced.subjectKey, beyond.key])
      expect(await committedOn(adapter, k)).toBeUndefined();
    // No OffsetApplied for a refused link or key: not on the foreign link's subject, nor on this link's.
    expect(
      await lastOnSubject(jsm, names.stream('applied'), names.applied('source', 'elsewhere', foreign.key)),
    ).toBeUndefined();
    for (const k of [foreign.key, misplaced.key, misplaced.subjectKey])
      expect(
        await lastOnSubject(jsm, names.stream('applied'), names.applied('source', 'target', k)),
      ).toBeUndefined();

    // Every event settled on its first delivery: the refused ones terminated, none handed back.
    // (Acknowledgements are not confirmed to the committer, so they are waited for; a termination the
    // server ignores would keep its message pending and redeliver it after the 2 s ack wait.)
    const consumer = await waitFor(
      'no translated event left pending',
      async () => {
        const info = await jsm.consumers.info(names.stream('translated'), 'committer-source-target');
        return info.num_ack_pending === 0 ? info : undefined;
      },
      { timeoutMs: 5_000, intervalMs: 100 },
    );
    expect(consumer.num_redelivered).toBe(0);
    expect(consumer.delivered.consumer_seq).toBe(8);

    const log = await committer.log();
    expect(log).toMatch(/refused a translated event for a link this committer does not serve/);
    expect(log).toContain(names.translated('source', 'target', foreign.key));
    expect(log).toMatch(/"bodyLink":"source -> elsewhere"/);
    expect(log).toContain(names.translated('source', 'target', misplaced.subjectKey));
    expect(log).toMatch(/refused to commit a target offset outside the target partition log/);
  });
});
