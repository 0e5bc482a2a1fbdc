import { metrics } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import fc from 'fast-check';
import { headers } from 'nats';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import {
  ApplyOutcome,
  compareVersions,
  ErrorCodes,
  formatCommitMetadata,
  Names,
  OffsetApplied,
  OffsetSyncError,
  OffsetTranslated,
  parseCommitMetadata,
  SkipReason,
  TranslationOutcome,
  type Version,
} from '@offsetsync/contracts';
import { type StreamMessage } from '@offsetsync/jetstream';
import {
  type CommitAnswer,
  type CommitEntry,
  type CommittedOffset,
  type GroupDescription,
  type PartitionBounds,
  type TopicPartition,
} from '@offsetsync/kafka';
import { ProblemBoard } from '@offsetsync/runtime';
import { ActiveGroups } from './active-groups.js';
import type { AppliedRecord } from './applied-record.js';
import type { AppliedVersionsStore, StoredEntry } from './applied-versions-store.js';
import { CommitPipeline, type InboundMessage, type TargetCluster } from './commit-pipeline.js';
import { OutcomeCounters } from './outcome-counters.js';

const names = new Names('t');
const NOW = 1_700_000_000_000;

/** Runs a call's effect at once, or when a test's scheduler releases it. */
type Defer = <T>(effect: () => T) => Promise<T>;
const immediate: Defer = (effect) => Promise.resolve().then(effect);

/** KV with JetStream's compare-and-set semantics; one revision counter for the whole bucket. */
class MemoryStore implements AppliedVersionsStore {
  readonly entries = new Map<string, { record: AppliedRecord | undefined; revision: number }>();
  /** Calls of read, write and remove. */
  readonly calls = { read: 0, write: 0, remove: 0 };
  private revision = 0;
  constructor(private readonly defer: Defer = immediate) {}

  read(key: string): Promise<StoredEntry> {
    this.calls.read++;
    return this.defer(() => {
      const entry = this.entries.get(key);
      return { record: entry?.record && structuredClone(entry.record), revision: entry?.revision ?? 0 };
    });
  }

  write(key: string, record: AppliedRecord, expectedRevision: number): Promise<number | undefined> {
    this.calls.write++;
    return this.defer(() => {
      if ((this.entries.get(key)?.revision ?? 0) !== expectedRevision) return undefined;
      this.entries.set(key, { record: structuredClone(record), revision: ++this.revision });
      return this.revision;
    });
  }

  remove(key: string, expectedRevision: number): Promise<boolean> {
    this.calls.remove++;
    return this.defer(() => {
      if ((this.entries.get(key)?.revision ?? 0) !== expectedRevision) return false;
      this.entries.set(key, { record: undefined, revision: ++this.revision });
      return true;
    });
  }
}

/**
 * A target cluster's committed offsets and log bounds, with groups that have live members and injectable
 * failures. A partition's log spans 0 to 1,000,000 unless a test sets its bounds.
 */
class FakeCluster implements TargetCluster {
  readonly committed = new Map<string, Map<string, { offset: number; metadata: string | null }>>();
  readonly commitCalls: { group: string; entries: CommitEntry[] }[] = [];
  readonly activeGroups = new Set<string>();
  readonly bounds = new Map<string, PartitionBounds | OffsetSyncError>();
  readonly boundsCalls: TopicPartition[][] = [];
  failNextCommit: ((entry: CommitEntry) => OffsetSyncError | undefined) | undefined;
  failCalls: OffsetSyncError | undefined;
  constructor(private readonly defer: Defer = immediate) {}

  partitionBounds(partitions: readonly TopicPartition[]): Promise<Array<PartitionBounds | OffsetSyncError>> {
    return this.defer(() => {
      if (this.failCalls) throw this.failCalls;
      this.boundsCalls.push([...partitions]);
      return partitions.map(
        (tp) =>
          this.bounds.get(`${tp.topic}/${tp.partition}`) ?? { logStartOffset: 0, highWatermark: 1_000_000 },
      );
    });
  }

  fetchCommittedOffsets(groupId: string, topics?: readonly string[]): Promise<CommittedOffset[]> {
    return this.defer(() => {
      if (this.failCalls) throw this.failCalls;
      return [...(this.committed.get(groupId) ?? [])].flatMap(([tp, value]) => {
        const [topic, partition] = tp.split('/') as [string, string];
        return topics === undefined || topics.includes(topic)
          ? [{ topic, partition: Number(partition), ...value }]
          : [];
      });
    });
  }

  commitOffsets(groupId: string, entries: readonly CommitEntry[]): Promise<CommitAnswer[]> {
    return this.defer(() => {
      if (this.failCalls) throw this.failCalls;
      this.commitCalls.push({ group: groupId, entries: [...entries] });
      const fail = this.failNextCommit;
      this.failNextCommit = undefined;
      return entries.map((entry) => {
        const error = this.activeGroups.has(groupId)
          ? new OffsetSyncError('refused', {
              code: ErrorCodes.GROUP_ACTIVE,
            })
          : fail?.(entry);
        if (error) return { topic: entry.topic, partition: entry.partition, error };
        this.setCommitted(groupId, entry.topic, entry.partition, entry.offset, entry.metadata);
        return { topic: entry.topic, partition: entry.partition };
      });
    });
  }

  describeGroup(groupId: string): Promise<GroupDescription> {
    return this.defer(() => {
      if (this.failCalls) throw this.failCalls;
      const active = this.activeGroups.has(groupId);
      return { state: active ? 'Stable' : 'Empty', protocolType: 'consumer', memberCount: active ? 2 : 0 };
    });
  }

  setCommitted(
    group: string,
    topic: string,
    partition: number,
    offset: number,
    metadata: string | null,
  ): void {
    const offsets =
      this.committed.get(group) ?? new Map<string, { offset: number; metadata: string | null }>();
    offsets.set(`${topic}/${partition}`, { offset, metadata });
    this.committed.set(group, offsets);
  }

  offsetOf(group: string, topic: string, partition: number) {
    return this.committed.get(group)?.get(`${topic}/${partition}`);
  }
}

class FakeMessage implements InboundMessage {
  settled: 'ack' | 'nak' | 'term' | undefined;
  nakDelayMs: number | undefined;
  readonly info = { redeliveryCount: 1 };
  constructor(
    readonly data: Uint8Array,
    readonly headers = eventHeaders(),
    readonly subject = names.translated('src', 'dst', { group: 'g', topic: 'orders', partition: 0 }),
  ) {}
  ack(): void {
    this.settled ??= 'ack';
  }
  nak(millis?: number): void {
    this.settled ??= 'nak';
    this.nakDelayMs = millis;
  }
  term(): void {
    this.settled ??= 'term';
  }
}

function eventHeaders(kind = 'OffsetTranslated') {
  const h = headers();
  h.set('Offsetsync-Event', kind);
  return h;
}

interface TranslatedSpec {
  group?: string;
  topic?: string;
  partition?: number;
  version: Version;
  targetOffset: number;
  outcome?: TranslationOutcome;
  sourceCommitTimestampMs?: number;
  /** Default: `src` and `dst`, the pipeline's link. */
  sourceCluster?: string;
  targetCluster?: string;
  /** Default: the subject of the key, as a translator publishes it. */
  subject?: string;
  /** The topic's name on the target; default: the same (empty). */
  targetTopic?: string;
}

function translated(spec: TranslatedSpec): FakeMessage {
  const gp = { group: spec.group ?? 'g', topic: spec.topic ?? 'orders', partition: spec.partition ?? 0 };
  return new FakeMessage(
    OffsetTranslated.encode(
      OffsetTranslated.fromPartial({
        sourceCluster: spec.sourceCluster ?? 'src',
        targetCluster: spec.targetCluster ?? 'dst',
        ...gp,
        sourceOffset: spec.targetOffset + 1000,
        targetOffset: spec.targetOffset,
        outcome: spec.outcome ?? TranslationOutcome.TRANSLATION_OUTCOME_EXACT,
        version: spec.version,
        sourceCommitTimestampMs: spec.sourceCommitTimestampMs ?? NOW - 1000,
        targetTopic: spec.targetTopic ?? '',
      }),
    ).finish(),
    eventHeaders(),
    spec.subject ?? names.translated('src', 'dst', gp),
  );
}

const v = (offsetsPartition: number, offsetsOffset: number): Version => ({ offsetsPartition, offsetsOffset });
const markOf = (version: Version) =>
  formatCommitMetadata(
    { origin: 'src', offsetsPartition: version.offsetsPartition, offsetsOffset: version.offsetsOffset },
    '',
  );

function setup(
  options: {
    store?: MemoryStore;
    cluster?: FakeCluster;
    /** Replaces `cluster` as what the pipeline talks to. */
    target?: TargetCluster;
    clock?: () => number;
    publish?: (messages: StreamMessage[]) => Promise<unknown>;
    beforeCommit?: (group: string) => Promise<void>;
    mode?: 'commit' | 'observe';
  } = {},
) {
  const store = options.store ?? new MemoryStore();
  const cluster = options.cluster ?? new FakeCluster();
  const published: { subject: string; msgId: string; event: OffsetApplied; kind: string }[] = [];
  const counters = new OutcomeCounters(metrics.getMeter('test'));
  const problems = new ProblemBoard(() => NOW);
  /** The messages of the pipeline's warnings and errors. */
  const warnings: string[] = [];
  const pipeline = new CommitPipeline({
    names,
    source: 'src',
    target: 'dst',
    mode: options.mode ?? 'commit',
    store,
    cluster: options.target ?? cluster,
    publish:
      options.publish ??
      ((messages) => {
        for (const m of messages) {
          published.push({
            subject: m.subject,
            msgId: m.msgId,
            event: OffsetApplied.decode(m.payload),
            kind: m.headers?.get('Offsetsync-Event') ?? '',
          });
        }
        return Promise.resolve();
      }),
    counters,
    activeGroups: new ActiveGroups(30_000),
    backoff: { minMs: 100, maxMs: 1000 },
    tracer: new BasicTracerProvider().getTracer('test'),
    logger: pino(
      { level: 'warn' },
      { write: (line: string) => warnings.push((JSON.parse(line) as { msg: string }).msg) },
    ),
    problems,
    clock: options.clock ?? (() => NOW),
    ...(options.beforeCommit === undefined ? {} : { beforeCommit: options.beforeCommit }),
  });
  return { pipeline, store, cluster, published, counters, problems, warnings };
}

const codes = (problems: ProblemBoard) => problems.list().map((p) => p.code);

const key = (group = 'g', topic = 'orders', partition = 0) =>
  names.linkKey('src', 'dst', { group, topic, partition });

describe('CommitPipeline', () => {
  it('commits an exact translation with the offsetsync mark, reports it, and acks after publishing', async () => {
    const { pipeline, cluster, published, store, counters } = setup();
    const message = translated({ version: v(7, 42), targetOffset: 120 });
    await pipeline.handleBatch([message]);

    expect(cluster.offsetOf('g', 'orders', 0)).toEqual({ offset: 120, metadata: markOf(v(7, 42)) });
    expect(parseCommitMetadata(cluster.offsetOf('g', 'orders', 0)?.metadata)?.mark).toEqual({
      origin: 'src',
      offsetsPartition: 7,
      offsetsOffset: 42,
    });
    expect(published).toHaveLength(1);
    expect(published[0]).toMatchObject({
      subject: names.applied('src', 'dst', { group: 'g', topic: 'orders', partition: 0 }),
      msgId: 'src:dst:7:42:APPLIED',
      kind: 'OffsetApplied',
      event: {
        outcome: ApplyOutcome.APPLY_OUTCOME_APPLIED,
        targetOffset: 120,
        exact: true,
        version: v(7, 42),
        appliedAtMs: NOW,
        sourceCommitTimestampMs: NOW - 1000,
      },
    });
    expect(message.settled).toBe('ack');
    expect(store.entries.get(key())?.record).toMatchObject({ version: v(7, 42), targetOffset: 120 });
    expect(counters.snapshot()).toEqual({ applied: 1 });
  });

  it('acks and counts pending and refused translations without committing or reporting them', async () => {
    const { pipeline, cluster, published, counters } = setup();
    const pending = translated({
      version: v(0, 1),
      targetOffset: -1,
      outcome: TranslationOutcome.TRANSLATION_OUTCOME_PENDING,
    });
    const refused = translated({
      version: v(0, 2),
      targetOffset: -1,
      outcome: TranslationOutcome.TRANSLATION_OUTCOME_REFUSED,
    });
    await pipeline.handleBatch([pending, refused]);
    expect([pending.settled, refused.settled]).toEqual(['ack', 'ack']);
    expect(cluster.commitCalls).toEqual([]);
    expect(published).toEqual([]);
    expect(counters.snapshot()).toEqual({ not_translated_pending: 1, not_translated_refused: 1 });
  });

  it('terminates what it cannot read', async () => {
    const { pipeline, counters } = setup();
    const garbage = new FakeMessage(new Uint8Array([0xff, 0xff, 0xff]));
    const wrongKind = new FakeMessage(
      translated({ version: v(0, 1), targetOffset: 1 }).data,
      eventHeaders('OffsetCommitted'),
    );
    const noOffset = translated({ version: v(0, 1), targetOffset: -1 });
    await pipeline.handleBatch([garbage, wrongKind, noOffset]);
    expect([garbage.settled, wrongKind.settled, noOffset.settled]).toEqual(['term', 'term', 'term']);
    expect(counters.snapshot()).toEqual({ malformed: 3 });
  });

  it('skips an older version delivered after a newer one and leaves the offset', async () => {
    const { pipeline, cluster, published } = setup();
    await pipeline.handleBatch([translated({ version: v(1, 20), targetOffset: 50 })]);
    const old = translated({ version: v(1, 10), targetOffset: 80 });
    await pipeline.handleBatch([old]);
    expect(cluster.offsetOf('g', 'orders', 0)?.offset).toBe(50);
    expect(cluster.commitCalls).toHaveLength(1);
    expect(published[1]?.event).toMatchObject({
      outcome: ApplyOutcome.APPLY_OUTCOME_SKIPPED,
      skipReason: SkipReason.SKIP_REASON_STALE_VERSION,
      targetOffset: -1,
    });
    expect(published[1]?.msgId).toBe('src:dst:1:10:STALE_VERSION');
    expect(old.settled).toBe('ack');
  });

  it('commits once per group with the newest translation per key, reporting the superseded ones first', async () => {
    const { pipeline, cluster, published } = setup();
    await pipeline.handleBatch([
      translated({ version: v(1, 5), targetOffset: 10, partition: 0 }),
      translated({ version: v(1, 9), targetOffset: 30, partition: 0 }),
      translated({ version: v(1, 7), targetOffset: 20, partition: 0 }),
      translated({ version: v(1, 8), targetOffset: 3, partition: 1 }),
      translated({ version: v(2, 1), targetOffset: 4, group: 'other' }),
    ]);
    expect(cluster.commitCalls).toHaveLength(2);
    expect(
      cluster.commitCalls.find((c) => c.group === 'g')?.entries.map((e) => [e.partition, e.offset]),
    ).toEqual([
      [0, 30],
      [1, 3],
    ]);
    // Each group is published when it is done, so only the order within a group is fixed.
    const reported = (group: string) =>
      published
        .filter((p) => p.event.group === group)
        .map((p) => [p.event.partition, p.event.version?.offsetsOffset, p.event.skipReason]);
    expect(reported('g')).toEqual([
      [0, 5, SkipReason.SKIP_REASON_STALE_VERSION],
      [0, 7, SkipReason.SKIP_REASON_STALE_VERSION],
      [0, 9, SkipReason.SKIP_REASON_UNSPECIFIED],
      [1, 8, SkipReason.SKIP_REASON_UNSPECIFIED],
    ]);
    expect(reported('other')).toEqual([[0, 1, SkipReason.SKIP_REASON_UNSPECIFIED]]);
  });

  it('reserves a key it has never seen with one compare-and-set write and no read before it', async () => {
    const { pipeline, store, cluster } = setup();
    await pipeline.handleBatch([translated({ version: v(1, 20), targetOffset: 5 })]);
    // One write (the reservation, expecting an empty key) and one read (the post-commit check).
    expect(store.calls).toEqual({ read: 1, write: 1, remove: 0 });
    expect(cluster.offsetOf('g', 'orders', 0)).toEqual({ offset: 5, metadata: markOf(v(1, 20)) });
  });

  it('decides again on what KV holds when a key it has never seen was written by another instance', async () => {
    const store = new MemoryStore();
    const other = setup({ store });
    await other.pipeline.handleBatch([translated({ version: v(1, 30), targetOffset: 9 })]);
    // A target that does not show the other instance's commit (yet), so only KV tells.
    const { pipeline, cluster, published } = setup({ store });
    const before = { ...store.calls };

    await pipeline.handleBatch([translated({ version: v(1, 20), targetOffset: 5 })]);

    // The guess of an empty key fails its compare-and-set; the read shows the newer version.
    expect(store.calls.write - before.write).toBe(1);
    expect(store.calls.read - before.read).toBe(1);
    expect(published.map((p) => p.event.skipReason)).toEqual([SkipReason.SKIP_REASON_STALE_VERSION]);
    expect(cluster.commitCalls).toEqual([]);
  });

  it('reserves a key it wrote last with one compare-and-set write and no read before it', async () => {
    const { pipeline, store, cluster } = setup();
    await pipeline.handleBatch([translated({ version: v(1, 20), targetOffset: 5 })]);
    const before = { ...store.calls };
    await pipeline.handleBatch([translated({ version: v(1, 21), targetOffset: 6 })]);
    // One write (the reservation) and one read (the post-commit check), not a read before the write.
    expect(store.calls.write - before.write).toBe(1);
    expect(store.calls.read - before.read).toBe(1);
    expect(cluster.offsetOf('g', 'orders', 0)).toEqual({ offset: 6, metadata: markOf(v(1, 21)) });
  });

  it('decides on KV, not on its remembered record, when another instance wrote the key since', async () => {
    const store = new MemoryStore();
    const cluster = new FakeCluster();
    const a = setup({ store, cluster });
    const b = setup({ store, cluster });
    await a.pipeline.handleBatch([translated({ version: v(1, 20), targetOffset: 5 })]);
    await b.pipeline.handleBatch([translated({ version: v(1, 30), targetOffset: 9 })]);
    // A remembers version 20; KV holds 30, so 25 is stale and 31 is applied.
    const stale = translated({ version: v(1, 25), targetOffset: 7 });
    await a.pipeline.handleBatch([stale]);
    expect(a.published.at(-1)?.event.skipReason).toBe(SkipReason.SKIP_REASON_STALE_VERSION);
    expect(cluster.offsetOf('g', 'orders', 0)).toEqual({ offset: 9, metadata: markOf(v(1, 30)) });
    await a.pipeline.handleBatch([translated({ version: v(1, 31), targetOffset: 10 })]);
    expect(cluster.offsetOf('g', 'orders', 0)).toEqual({ offset: 10, metadata: markOf(v(1, 31)) });
    expect(store.entries.get(key())?.record?.version).toEqual(v(1, 31));
  });

  it('applies a rewind', async () => {
    const { pipeline, cluster } = setup();
    await pipeline.handleBatch([translated({ version: v(1, 20), targetOffset: 500 })]);
    await pipeline.handleBatch([translated({ version: v(1, 21), targetOffset: 10 })]);
    expect(cluster.offsetOf('g', 'orders', 0)).toEqual({ offset: 10, metadata: markOf(v(1, 21)) });
  });

  it('reports a redelivery of an applied version without committing again', async () => {
    const { pipeline, cluster, published, counters } = setup();
    await pipeline.handleBatch([translated({ version: v(1, 20), targetOffset: 5 })]);
    const again = translated({ version: v(1, 20), targetOffset: 5 });
    await pipeline.handleBatch([again]);
    expect(cluster.commitCalls).toHaveLength(1);
    expect(published.map((p) => p.msgId)).toEqual(['src:dst:1:20:APPLIED', 'src:dst:1:20:APPLIED']);
    expect(again.settled).toBe('ack');
    expect(counters.snapshot()).toEqual({ applied: 1, already_applied: 1 });
  });

  it('commits a reserved version again when a crash left it out of the target', async () => {
    const { pipeline, cluster, store } = setup();
    store.entries.set(key(), {
      record: {
        version: v(1, 20),
        targetOffset: 5,
        appliedAtMs: NOW - 10,
        sourceCommitTimestampMs: NOW - 20,
      },
      revision: 1,
    });
    await pipeline.handleBatch([translated({ version: v(1, 20), targetOffset: 5 })]);
    expect(cluster.offsetOf('g', 'orders', 0)).toEqual({ offset: 5, metadata: markOf(v(1, 20)) });
  });

  it('skips a group with live members, restores KV, and does not ask the broker again until the wait is over', async () => {
    let now = NOW;
    const { pipeline, cluster, store, published } = setup({ clock: () => now });
    await pipeline.handleBatch([translated({ version: v(1, 1), targetOffset: 10 })]);
    cluster.activeGroups.add('g');
    const refused = translated({ version: v(1, 2), targetOffset: 20 });
    await pipeline.handleBatch([refused]);
    expect(refused.settled).toBe('ack');
    expect(published[1]?.event).toMatchObject({
      skipReason: SkipReason.SKIP_REASON_ACTIVE_ON_TARGET,
      targetOffset: -1,
    });
    expect(store.entries.get(key())?.record).toMatchObject({ version: v(1, 1), targetOffset: 10 });
    expect(cluster.offsetOf('g', 'orders', 0)?.offset).toBe(10);

    const calls = cluster.commitCalls.length;
    now += 10_000;
    await pipeline.handleBatch([translated({ version: v(1, 3), targetOffset: 30 })]);
    expect(cluster.commitCalls).toHaveLength(calls);
    expect(published[2]?.event.skipReason).toBe(SkipReason.SKIP_REASON_ACTIVE_ON_TARGET);

    cluster.activeGroups.delete('g');
    now += 30_000;
    await pipeline.handleBatch([translated({ version: v(1, 4), targetOffset: 40 })]);
    expect(cluster.offsetOf('g', 'orders', 0)).toEqual({ offset: 40, metadata: markOf(v(1, 4)) });
  });

  it('naks with backoff on a transient failure and restores KV; reports a permanent one with its code', async () => {
    const { pipeline, cluster, store, published, problems } = setup();
    await pipeline.handleBatch([translated({ version: v(1, 1), targetOffset: 10 })]);

    cluster.failNextCommit = () =>
      new OffsetSyncError('coordinator loading', { code: ErrorCodes.KAFKA_BROKER_ERROR, retryable: true });
    const transient = translated({ version: v(1, 2), targetOffset: 20 });
    transient.info.redeliveryCount = 3;
    await pipeline.handleBatch([transient]);
    expect(transient.settled).toBe('nak');
    expect(transient.nakDelayMs).toBe(400);
    expect(store.entries.get(key())?.record?.version).toEqual(v(1, 1));
    expect(published).toHaveLength(1);
    expect(codes(problems)).toEqual(['KAFKA_BROKER_ERROR']);

    cluster.failNextCommit = () =>
      new OffsetSyncError('commitOffsets failed', {
        code: ErrorCodes.KAFKA_BROKER_ERROR,
        details: { brokerError: 'UNKNOWN_TOPIC_OR_PARTITION', brokerCode: 3 },
      });
    const permanent = translated({ version: v(1, 3), targetOffset: 30 });
    await pipeline.handleBatch([permanent]);
    expect(permanent.settled).toBe('ack');
    expect(published[1]?.event).toMatchObject({ skipReason: SkipReason.SKIP_REASON_COMMIT_FAILED });
    expect(published[1]?.event.detail).toContain('UNKNOWN_TOPIC_OR_PARTITION (3)');
    expect(store.entries.get(key())?.record?.version).toEqual(v(1, 1));
    expect(problems.list()).toMatchObject([{ code: 'KAFKA_BROKER_ERROR', detail: 'commitOffsets failed' }]);

    cluster.failCalls = new OffsetSyncError('no broker', { code: ErrorCodes.KAFKA_UNREACHABLE });
    const unreachable = translated({ version: v(1, 4), targetOffset: 40 });
    await pipeline.handleBatch([unreachable]);
    expect(unreachable.settled).toBe('nak');
    expect(codes(problems)).toEqual(['KAFKA_BROKER_ERROR', 'KAFKA_UNREACHABLE']);

    cluster.failCalls = undefined;
    const later = translated({ version: v(1, 4), targetOffset: 40 });
    await pipeline.handleBatch([later]);
    expect(later.settled).toBe('ack');
    // Reading the group's offsets and committing work again: both problems are cleared.
    expect(problems.list()).toEqual([]);
    expect(cluster.offsetOf('g', 'orders', 0)?.offset).toBe(40);
  });

  it('removes a first reservation whose commit failed', async () => {
    const { pipeline, cluster, store } = setup();
    cluster.failNextCommit = () => new OffsetSyncError('down', { code: ErrorCodes.KAFKA_UNREACHABLE });
    await pipeline.handleBatch([translated({ version: v(1, 1), targetOffset: 10 })]);
    expect(store.entries.get(key())?.record).toBeUndefined();
  });

  it('commits on the topic the link renamed, judges its bounds and application commits there, and reports both names', async () => {
    const { pipeline, cluster, published } = setup();
    cluster.bounds.set('src.orders/0', { logStartOffset: 0, highWatermark: 100 });
    const renamed = (version: Version, targetOffset: number, sourceCommitTimestampMs = NOW - 1000) =>
      translated({ version, targetOffset, targetTopic: 'src.orders', sourceCommitTimestampMs });
    await pipeline.handleBatch([renamed(v(1, 1), 40)]);
    expect(cluster.offsetOf('g', 'src.orders', 0)?.offset).toBe(40);
    expect(cluster.offsetOf('g', 'orders', 0)).toBeUndefined();
    expect(published[0]?.event).toMatchObject({
      topic: 'orders',
      targetTopic: 'src.orders',
      targetOffset: 40,
    });
    // Beyond the renamed topic's log end (100), not the default bounds of `orders`.
    await pipeline.handleBatch([renamed(v(1, 2), 150)]);
    expect(published[1]?.event.skipReason).toBe(SkipReason.SKIP_REASON_OUT_OF_LOG_BOUNDS);
    // The application's own commit on the renamed topic is kept.
    cluster.setCommitted('g', 'src.orders', 0, 60, '');
    await pipeline.handleBatch([renamed(v(1, 3), 50, NOW - 500)]);
    expect(published[2]?.event.skipReason).toBe(SkipReason.SKIP_REASON_TARGET_AHEAD);
    expect(cluster.offsetOf('g', 'src.orders', 0)?.offset).toBe(60);
  });

  it('terminates a translation whose target topic is not a Kafka topic name', async () => {
    const { pipeline, cluster, published } = setup();
    const message = translated({ version: v(1, 1), targetOffset: 40, targetTopic: 'src/orders' });
    await pipeline.handleBatch([message]);
    expect(message.settled).toBe('term');
    expect(cluster.commitCalls).toEqual([]);
    expect(published).toEqual([]);
  });

  it("keeps the application's own commit against older source commits and yields to a later one", async () => {
    let now = NOW;
    const { pipeline, cluster, store, published } = setup({ clock: () => now });
    await pipeline.handleBatch([
      translated({ version: v(1, 1), targetOffset: 10, sourceCommitTimestampMs: NOW - 5000 }),
    ]);
    // The application runs on the target and commits on its own.
    cluster.setCommitted('g', 'orders', 0, 17, '');
    await pipeline.handleBatch([
      translated({ version: v(1, 2), targetOffset: 12, sourceCommitTimestampMs: NOW - 100 }),
    ]);
    expect(cluster.offsetOf('g', 'orders', 0)?.offset).toBe(17);
    expect(published[1]?.event.skipReason).toBe(SkipReason.SKIP_REASON_TARGET_AHEAD);
    expect(store.entries.get(key())?.record).toMatchObject({ version: v(1, 1), targetOwnedSinceMs: NOW });

    now += 60_000;
    await pipeline.handleBatch([
      translated({ version: v(1, 3), targetOffset: 13, sourceCommitTimestampMs: NOW }),
    ]);
    expect(published[2]?.event.skipReason).toBe(SkipReason.SKIP_REASON_TARGET_AHEAD);
    await pipeline.handleBatch([
      translated({ version: v(1, 4), targetOffset: 14, sourceCommitTimestampMs: NOW + 1 }),
    ]);
    expect(cluster.offsetOf('g', 'orders', 0)).toEqual({ offset: 14, metadata: markOf(v(1, 4)) });
    expect(store.entries.get(key())?.record?.targetOwnedSinceMs).toBeUndefined();
  });

  it('observing, decides as a commit would, reports the offset it would commit, and writes nothing to the target or KV', async () => {
    const store = new MemoryStore();
    const cluster = new FakeCluster();
    const observer = setup({ store, cluster, mode: 'observe' });
    const first = translated({ version: v(3, 30), targetOffset: 120 });
    await observer.pipeline.handleBatch([first]);
    expect(cluster.commitCalls).toEqual([]);
    expect(store.calls.write + store.calls.remove).toBe(0);
    expect(first.settled).toBe('ack');
    expect(observer.published[0]).toMatchObject({
      msgId: 'src:dst:3:30:OBSERVED',
      event: {
        outcome: ApplyOutcome.APPLY_OUTCOME_OBSERVED,
        skipReason: SkipReason.SKIP_REASON_UNSPECIFIED,
        targetOffset: 120,
        exact: true,
        detail: 'the link observes: would commit 120 on the target; nothing committed',
      },
    });
    expect(observer.counters.snapshot()).toEqual({ observed: 1 });

    // The application commits on the target on its own: a commit would keep its position, so would this.
    cluster.setCommitted('g', 'orders', 0, 300, '');
    await observer.pipeline.handleBatch([
      translated({ version: v(3, 31), targetOffset: 125, sourceCommitTimestampMs: NOW - 2000 }),
    ]);
    expect(observer.published[1]?.event).toMatchObject({
      outcome: ApplyOutcome.APPLY_OUTCOME_SKIPPED,
      skipReason: SkipReason.SKIP_REASON_TARGET_AHEAD,
    });
    expect(store.calls.write + store.calls.remove).toBe(0);
    cluster.committed.clear();

    // Live members on the target: a commit would be refused, and the observer says so.
    cluster.activeGroups.add('busy');
    await observer.pipeline.handleBatch([translated({ group: 'busy', version: v(3, 40), targetOffset: 7 })]);
    expect(observer.published[2]?.event).toMatchObject({
      outcome: ApplyOutcome.APPLY_OUTCOME_SKIPPED,
      skipReason: SkipReason.SKIP_REASON_ACTIVE_ON_TARGET,
      detail: 'the group has 2 live member(s) on the target; a commit would be refused',
    });

    // Switched to commit: the same translation is committed, not judged already applied or stale.
    const committer = setup({ store, cluster });
    await committer.pipeline.handleBatch([translated({ version: v(3, 30), targetOffset: 120 })]);
    expect(cluster.offsetOf('g', 'orders', 0)).toEqual({ offset: 120, metadata: markOf(v(3, 30)) });
    expect(committer.published[0]?.event.outcome).toBe(ApplyOutcome.APPLY_OUTCOME_APPLIED);
  });

  it("never steps back when KV is lost: the target's commit mark is the floor", async () => {
    const { pipeline, cluster, store, published } = setup();
    await pipeline.handleBatch([translated({ version: v(1, 20), targetOffset: 50 })]);
    // The bucket is lost and recreated empty; the streams replay an older translation.
    const lost = new MemoryStore();
    const after = setup({ store: lost, cluster });
    const older = translated({ version: v(1, 10), targetOffset: 80 });
    await after.pipeline.handleBatch([older]);
    expect(cluster.offsetOf('g', 'orders', 0)).toEqual({ offset: 50, metadata: markOf(v(1, 20)) });
    expect(cluster.commitCalls).toHaveLength(1);
    expect(after.published[0]?.event).toMatchObject({
      outcome: ApplyOutcome.APPLY_OUTCOME_SKIPPED,
      skipReason: SkipReason.SKIP_REASON_STALE_VERSION,
    });
    expect(after.published[0]?.event.detail).toMatch(/the target's commit mark holds a newer version/);
    expect(older.settled).toBe('ack');
    expect(lost.entries.get(key())).toBeUndefined();
    // A newer one is applied and KV is written again.
    await after.pipeline.handleBatch([translated({ version: v(1, 30), targetOffset: 60 })]);
    expect(cluster.offsetOf('g', 'orders', 0)).toEqual({ offset: 60, metadata: markOf(v(1, 30)) });
    expect(lost.entries.get(key())?.record?.version).toEqual(v(1, 30));
    expect(store.entries.get(key())?.record?.version).toEqual(v(1, 20));
    expect(published).toHaveLength(1);
  });

  it('keeps an application commit made between the decision and the commit, reports it and records the ownership', async () => {
    let racing = false;
    const { pipeline, cluster, store, published, counters } = setup({
      beforeCommit: (group) => {
        // An application using assign() commits without joining the group: the broker takes it.
        if (racing) cluster.setCommitted(group, 'orders', 0, 77, '');
        return Promise.resolve();
      },
    });
    await pipeline.handleBatch([translated({ version: v(1, 1), targetOffset: 10 })]);
    racing = true;
    const raced = translated({ version: v(1, 2), targetOffset: 20, partition: 0 });
    const other = translated({ version: v(1, 3), targetOffset: 30, partition: 1 });
    await pipeline.handleBatch([raced, other]);

    expect(cluster.offsetOf('g', 'orders', 0)).toEqual({ offset: 77, metadata: '' });
    // The group's other partition is committed as decided.
    expect(cluster.offsetOf('g', 'orders', 1)).toEqual({ offset: 30, metadata: markOf(v(1, 3)) });
    expect(cluster.commitCalls.at(-1)?.entries.map((e) => e.partition)).toEqual([1]);
    const event = published.find((p) => p.event.partition === 0 && p.event.version?.offsetsOffset === 2);
    expect(event?.event).toMatchObject({ skipReason: SkipReason.SKIP_REASON_TARGET_AHEAD, targetOffset: -1 });
    expect(event?.event.detail).toMatch(
      /the application committed offset 77 on the target after offsetsync decided/,
    );
    expect(raced.settled).toBe('ack');
    // The reservation is withdrawn: the version applied before stays, and the target owns the position.
    expect(store.entries.get(key())?.record).toMatchObject({
      version: v(1, 1),
      targetOffset: 10,
      targetOwnedSinceMs: NOW,
    });
    expect(counters.applicationCommitsSeen()).toEqual({ before_commit: 1, after_commit: 0 });

    // A later redelivery of the same source commit is skipped by the ownership rule; nothing overwrites 77.
    racing = false;
    await pipeline.handleBatch([translated({ version: v(1, 2), targetOffset: 20 })]);
    expect(cluster.offsetOf('g', 'orders', 0)).toEqual({ offset: 77, metadata: '' });
    expect(published.at(-1)?.event.skipReason).toBe(SkipReason.SKIP_REASON_TARGET_AHEAD);
  });

  it('records the ownership of a raced application commit also for a redelivered reservation (nothing was written)', async () => {
    let racing = false;
    const { pipeline, cluster, store } = setup({
      beforeCommit: (group) => {
        if (racing) cluster.setCommitted(group, 'orders', 0, 77, '');
        return Promise.resolve();
      },
    });
    // A crash left the reservation of 1:20 in KV without its commit.
    store.entries.set(key(), {
      record: { version: v(1, 20), targetOffset: 5, appliedAtMs: 1, sourceCommitTimestampMs: 1 },
      revision: 1,
    });
    racing = true;
    await pipeline.handleBatch([translated({ version: v(1, 20), targetOffset: 5 })]);
    expect(cluster.offsetOf('g', 'orders', 0)).toEqual({ offset: 77, metadata: '' });
    expect(store.entries.get(key())?.record).toMatchObject({ version: v(1, 20), targetOwnedSinceMs: NOW });
  });

  it("skips as stale when offsetsync's mark of a newer version appears between the decision and the commit", async () => {
    const cluster = new FakeCluster();
    let racing = false;
    const { pipeline, published, store } = setup({
      cluster,
      beforeCommit: (group) => {
        // Another instance, with a KV that was lost and rebuilt, committed a newer version meanwhile.
        if (racing) cluster.setCommitted(group, 'orders', 0, 99, markOf(v(1, 9)));
        return Promise.resolve();
      },
    });
    racing = true;
    await pipeline.handleBatch([translated({ version: v(1, 5), targetOffset: 50 })]);
    expect(cluster.offsetOf('g', 'orders', 0)).toEqual({ offset: 99, metadata: markOf(v(1, 9)) });
    expect(published[0]?.event.skipReason).toBe(SkipReason.SKIP_REASON_STALE_VERSION);
    expect(store.entries.get(key())?.record).toBeUndefined();
  });

  it('reports an application commit that landed right after its commit, and leaves it', async () => {
    const cluster = new FakeCluster();
    const target: TargetCluster = {
      fetchCommittedOffsets: (group, topics) => cluster.fetchCommittedOffsets(group, topics),
      partitionBounds: (partitions) => cluster.partitionBounds(partitions),
      describeGroup: (group) => cluster.describeGroup(group),
      commitOffsets: async (group, entries) => {
        const answers = await cluster.commitOffsets(group, entries);
        cluster.setCommitted(group, 'orders', 0, 88, null);
        return answers;
      },
    };
    const { pipeline, published, counters } = setup({ cluster, target });
    await pipeline.handleBatch([translated({ version: v(1, 5), targetOffset: 50 })]);
    expect(published[0]?.event).toMatchObject({
      outcome: ApplyOutcome.APPLY_OUTCOME_APPLIED,
      targetOffset: 50,
    });
    expect(published[0]?.event.detail).toMatch(
      /the application committed offset 88 on the target right after/,
    );
    expect(cluster.offsetOf('g', 'orders', 0)).toEqual({ offset: 88, metadata: null });
    expect(cluster.commitCalls).toHaveLength(1);
    expect(counters.applicationCommitsSeen()).toEqual({ before_commit: 0, after_commit: 1 });
  });

  it('does not commit a newer reserved version again over an application commit (the re-commit check reads the target)', async () => {
    // Instance A's commit of version 1 is held until B has reserved and committed version 2; right after
    // A's commit lands, the application commits on its own.
    let releaseA: (() => void) | undefined;
    let aInFlight: (() => void) | undefined;
    const aCommitSent = new Promise<void>((resolve) => (aInFlight = resolve));
    const store = new MemoryStore();
    const cluster = new FakeCluster();
    const slowCluster: TargetCluster = {
      fetchCommittedOffsets: (group, topics) => cluster.fetchCommittedOffsets(group, topics),
      partitionBounds: (partitions) => cluster.partitionBounds(partitions),
      describeGroup: (group) => cluster.describeGroup(group),
      commitOffsets: async (group, entries) => {
        if (releaseA !== undefined) return cluster.commitOffsets(group, entries);
        await new Promise<void>((resolve) => {
          releaseA = resolve;
          aInFlight?.();
        });
        const answers = await cluster.commitOffsets(group, entries);
        cluster.setCommitted(group, 'orders', 0, 150, '');
        return answers;
      },
    };
    const a = setup({ store, cluster, target: slowCluster });
    const b = setup({ store, cluster });
    const aDone = a.pipeline.handleBatch([translated({ version: v(1, 1), targetOffset: 100 })]);
    await aCommitSent;
    await b.pipeline.handleBatch([translated({ version: v(1, 2), targetOffset: 200 })]);
    releaseA!();
    await aDone;
    expect(cluster.commitCalls.map((c) => c.entries[0]?.offset)).toEqual([200, 100]);
    expect(cluster.offsetOf('g', 'orders', 0)).toEqual({ offset: 150, metadata: '' });
  });

  it('terminates, counts and files a translation for another link, and commits, reserves and reports nothing for it', async () => {
    const { pipeline, cluster, store, published, counters, problems } = setup();
    // On a subject of the pipeline's link (what the consumer delivers), a body naming another link.
    const foreign = translated({ version: v(1, 9), targetOffset: 500, targetCluster: 'other', group: 'f' });
    const misplaced = translated({
      version: v(1, 8),
      targetOffset: 400,
      group: 'victim',
      subject: names.translated('src', 'dst', { group: 'g', topic: 'orders', partition: 0 }),
    });
    const valid = translated({ version: v(1, 1), targetOffset: 10, group: 'h' });
    await pipeline.handleBatch([foreign, misplaced, valid]);

    expect([foreign.settled, misplaced.settled, valid.settled]).toEqual(['term', 'term', 'ack']);
    expect(cluster.commitCalls.map((c) => c.group)).toEqual(['h']);
    expect(cluster.offsetOf('victim', 'orders', 0)).toBeUndefined();
    expect(cluster.offsetOf('g', 'orders', 0)).toBeUndefined();
    expect(cluster.offsetOf('f', 'orders', 0)).toBeUndefined();
    expect([...store.entries.keys()]).toEqual([key('h')]);
    expect(published.map((p) => p.subject)).toEqual([
      names.applied('src', 'dst', { group: 'h', topic: 'orders', partition: 0 }),
    ]);
    expect(counters.snapshot()).toEqual({ applied: 1, refused_foreign_link: 1, refused_subject_mismatch: 1 });
    // One problem per kind, each naming the subject of its last refused event.
    expect(problems.list()).toMatchObject([
      {
        code: 'EVENT_REFUSED',
        resource: `SUBJECT:${foreign.subject}`,
        detail: expect.stringContaining('names link src -> other') as unknown,
      },
      {
        code: 'EVENT_REFUSED',
        resource: `SUBJECT:${misplaced.subject}`,
        detail: expect.stringContaining('group victim') as unknown,
      },
    ]);
    expect(pipeline.lastVersion).toEqual(v(1, 1));
  });

  it('refuses a target offset above the log end with SKIPPED OUT_OF_LOG_BOUNDS, never committing or reserving it', async () => {
    const { pipeline, cluster, store, published, counters, problems } = setup();
    cluster.bounds.set('orders/0', { logStartOffset: 0, highWatermark: 100 });
    const beyond = translated({ version: v(1, 2), targetOffset: 101 });
    const valid = translated({ version: v(1, 1), targetOffset: 100, partition: 1 });
    await pipeline.handleBatch([beyond, valid]);

    expect([beyond.settled, valid.settled]).toEqual(['ack', 'ack']);
    expect(cluster.commitCalls.flatMap((c) => c.entries.map((e) => [e.partition, e.offset]))).toEqual([
      [1, 100],
    ]);
    expect(store.entries.has(key())).toBe(false);
    expect(published.find((p) => p.event.partition === 0)).toMatchObject({
      msgId: 'src:dst:1:2:OUT_OF_LOG_BOUNDS',
      event: {
        outcome: ApplyOutcome.APPLY_OUTCOME_SKIPPED,
        skipReason: SkipReason.SKIP_REASON_OUT_OF_LOG_BOUNDS,
        targetOffset: -1,
        detail: 'target offset 101 is above the log end offset 100 of orders-0 on the target',
      },
    });
    expect(counters.snapshot()).toEqual({ applied: 1, skipped_out_of_log_bounds: 1 });
    expect(problems.list()).toMatchObject([{ code: 'OFFSET_OUT_OF_LOG_BOUNDS' }]);
  });

  it('refuses a target offset below the log start, judged on a fresh read', async () => {
    const { pipeline, cluster, published } = setup();
    cluster.bounds.set('orders/0', { logStartOffset: 50, highWatermark: 100 });
    const below = translated({ version: v(1, 2), targetOffset: 49 });
    await pipeline.handleBatch([below]);
    expect(cluster.commitCalls).toEqual([]);
    expect(published[0]?.event).toMatchObject({
      skipReason: SkipReason.SKIP_REASON_OUT_OF_LOG_BOUNDS,
      detail: 'target offset 49 is below the log start offset 50 of orders-0 on the target',
    });
  });

  it('reads bounds once per batch for the offsets above the cached end, and not at all for those within it', async () => {
    const { pipeline, cluster } = setup();
    cluster.bounds.set('orders/0', { logStartOffset: 0, highWatermark: 100 });
    cluster.bounds.set('orders/1', { logStartOffset: 0, highWatermark: 100 });
    await pipeline.handleBatch([
      translated({ version: v(1, 1), targetOffset: 10, group: 'a' }),
      translated({ version: v(2, 1), targetOffset: 20, group: 'b' }),
      translated({ version: v(1, 2), targetOffset: 30, group: 'a', partition: 1 }),
    ]);
    expect(cluster.boundsCalls).toEqual([
      [
        { topic: 'orders', partition: 0 },
        { topic: 'orders', partition: 1 },
      ],
    ]);
    await pipeline.handleBatch([
      translated({ version: v(1, 3), targetOffset: 100, group: 'a' }),
      translated({ version: v(2, 2), targetOffset: 50, group: 'b', partition: 1 }),
    ]);
    expect(cluster.boundsCalls).toHaveLength(1);
    // The log grew: an offset above the cached end is read again before it is judged, and then applied.
    cluster.bounds.set('orders/0', { logStartOffset: 0, highWatermark: 150 });
    const grown = translated({ version: v(1, 4), targetOffset: 150, group: 'a' });
    await pipeline.handleBatch([grown]);
    expect(cluster.boundsCalls).toHaveLength(2);
    expect(cluster.offsetOf('a', 'orders', 0)?.offset).toBe(150);
  });

  it('applies an older translation of a key whose newer one in the same batch lies beyond the log end', async () => {
    const { pipeline, cluster, published } = setup();
    cluster.bounds.set('orders/0', { logStartOffset: 0, highWatermark: 100 });
    await pipeline.handleBatch([
      translated({ version: v(1, 1), targetOffset: 40 }),
      translated({ version: v(1, 2), targetOffset: 9_999 }),
    ]);
    expect(cluster.offsetOf('g', 'orders', 0)).toEqual({ offset: 40, metadata: markOf(v(1, 1)) });
    // The applied stream keeps the last event per key: the outcome of what the target now holds.
    expect(published.map((p) => p.msgId)).toEqual(['src:dst:1:2:OUT_OF_LOG_BOUNDS', 'src:dst:1:1:APPLIED']);
  });

  it('hands back, without committing, a translation whose bounds cannot be read or whose partition is missing', async () => {
    const { pipeline, cluster, problems, counters, warnings } = setup();
    cluster.bounds.set(
      'orders/0',
      new OffsetSyncError('partition orders-0 does not exist on the cluster', {
        code: ErrorCodes.PARTITION_MISSING,
      }),
    );
    const missing = translated({ version: v(1, 1), targetOffset: 5 });
    await pipeline.handleBatch([missing]);
    expect(missing.settled).toBe('nak');
    expect(cluster.commitCalls).toEqual([]);
    expect(codes(problems)).toEqual(['PARTITION_MISSING']);
    // Logged once: its redelivery is the same problem, on the heartbeat only.
    await pipeline.handleBatch([translated({ version: v(1, 1), targetOffset: 5 })]);
    expect(warnings).toEqual([
      'could not read the log bounds of target partitions; their events are not committed until they can be checked',
    ]);

    cluster.bounds.delete('orders/0');
    cluster.failCalls = new OffsetSyncError('no broker', { code: ErrorCodes.KAFKA_UNREACHABLE });
    const unreachable = translated({ version: v(1, 2), targetOffset: 5 });
    await pipeline.handleBatch([unreachable]);
    expect(unreachable.settled).toBe('nak');
    expect(codes(problems)).toEqual(['KAFKA_UNREACHABLE']);

    cluster.failCalls = undefined;
    const fine = translated({ version: v(1, 3), targetOffset: 5 });
    await pipeline.handleBatch([fine]);
    expect(fine.settled).toBe('ack');
    expect(problems.list()).toEqual([]);
    expect(counters.snapshot()).toEqual({ retried: 3, applied: 1 });
  });

  it('rejects without settling when the events cannot be published', async () => {
    const { pipeline } = setup({
      publish: () => Promise.reject(new OffsetSyncError('nats down', { code: ErrorCodes.NATS_UNREACHABLE })),
    });
    const message = translated({ version: v(1, 1), targetOffset: 10 });
    await expect(pipeline.handleBatch([message])).rejects.toMatchObject({ code: 'NATS_UNREACHABLE' });
    expect(message.settled).toBeUndefined();
  });

  it('writes the newer version last when an older commit overtakes it (two instances)', async () => {
    // Instance A's commit of version 1 is held in flight until B has reserved and committed version 2.
    let releaseA: (() => void) | undefined;
    let aInFlight: (() => void) | undefined;
    const aCommitSent = new Promise<void>((resolve) => (aInFlight = resolve));
    const store = new MemoryStore();
    const cluster = new FakeCluster();
    const slowCluster: TargetCluster = {
      fetchCommittedOffsets: (group, topics) => cluster.fetchCommittedOffsets(group, topics),
      partitionBounds: (partitions) => cluster.partitionBounds(partitions),
      describeGroup: (group) => cluster.describeGroup(group),
      commitOffsets: async (group, entries) => {
        if (releaseA === undefined) {
          await new Promise<void>((resolve) => {
            releaseA = resolve;
            aInFlight?.();
          });
        }
        return cluster.commitOffsets(group, entries);
      },
    };
    const a = setup({ store, cluster, target: slowCluster });
    const b = setup({ store, cluster });
    const aDone = a.pipeline.handleBatch([translated({ version: v(1, 1), targetOffset: 100 })]);
    await aCommitSent;
    await b.pipeline.handleBatch([translated({ version: v(1, 2), targetOffset: 200 })]);
    expect(cluster.offsetOf('g', 'orders', 0)?.offset).toBe(200);
    releaseA!();
    await aDone;
    expect(cluster.commitCalls.map((c) => c.entries[0]?.offset)).toEqual([200, 100, 200]);
    expect(cluster.offsetOf('g', 'orders', 0)).toEqual({ offset: 200, metadata: markOf(v(1, 2)) });
  });

  it('converges on the newest version per key whatever the interleaving of two instances', async () => {
    const translationsArb = fc.uniqueArray(
      fc.record({ partition: fc.nat(1), offset: fc.nat(30), targetOffset: fc.nat(1000) }),
      { minLength: 1, maxLength: 12, selector: (t) => t.offset },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        translationsArb,
        fc.array(fc.tuple(fc.nat(11), fc.boolean(), fc.nat(3)), { minLength: 1, maxLength: 30 }),
        async (s, translations, plan) => {
          const defer: Defer = (effect) => s.schedule(Promise.resolve()).then(effect);
          const store = new MemoryStore(defer);
          const cluster = new FakeCluster(defer);
          const instances = [setup({ store, cluster }), setup({ store, cluster })];
          // Each translation is delivered at least once; the plan adds duplicates, routes each delivery to
          // an instance and cuts the instances' streams into batches.
          const deliveries = [
            ...translations.map((t, i) => ({ t, instance: i % 2, cut: true })),
            ...plan.map(([index, second, cut]) => ({
              t: translations[index % translations.length]!,
              instance: second ? 1 : 0,
              cut: cut === 0,
            })),
          ];
          const runs = instances.map(async (instance, n) => {
            let batch: FakeMessage[] = [];
            const batches: FakeMessage[][] = [];
            for (const d of deliveries.filter((d) => d.instance === n)) {
              batch.push(
                translated({
                  partition: d.t.partition,
                  version: v(0, d.t.offset),
                  targetOffset: d.t.targetOffset,
                }),
              );
              if (d.cut) {
                batches.push(batch);
                batch = [];
              }
            }
            if (batch.length > 0) batches.push(batch);
            for (const b of batches) await instance.pipeline.handleBatch(b);
          });
          await s.waitFor(Promise.all(runs));
          for (const partition of [0, 1]) {
            const mine = translations.filter((t) => t.partition === partition);
            if (mine.length === 0) continue;
            const newest = mine.reduce((a, b) =>
              compareVersions(v(0, b.offset), v(0, a.offset)) > 0 ? b : a,
            );
            expect(cluster.offsetOf('g', 'orders', partition)).toEqual({
              offset: newest.targetOffset,
              metadata: markOf(v(0, newest.offset)),
            });
            expect(store.entries.get(key('g', 'orders', partition))?.record?.version).toEqual(
              v(0, newest.offset),
            );
          }
        },
      ),
      { numRuns: 200 },
    );
    // 200 scheduled interleavings are CPU work: several seconds on a busy 2-core machine.
  }, 60_000);
});
