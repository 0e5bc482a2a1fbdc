import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { metrics } from '@opentelemetry/api';
import {
  AnchorStatus,
  ErrorCodes,
  formatCommitMetadata,
  Names,
  OffsetCommitted,
  OffsetDeleted,
  OffsetSyncError,
} from '@offsetsync/contracts';
import { type StreamMessage } from '@offsetsync/jetstream';
import { AnchorResolver, type AnchorRecordSource, type SourceRecord } from './anchor-resolver.js';
import { createCommitFilter } from './commit-filter.js';
import { CollectorPipeline } from './collector-pipeline.js';
import {
  encodeGroupMetadataKey,
  encodeOffsetCommitKey,
  encodeOffsetCommitValue,
} from './offsets-topic-encoder.js';
import type { RawOffsetsRecord } from './offsets-topic-decoder.js';
import { OutcomeCounters } from './outcome-counters.js';

const names = new Names('t');

/** Every partition holds records 0..99 with timestamp 1000+offset. */
const source: AnchorRecordSource = {
  bounds: (partitions) => Promise.resolve(partitions.map(() => ({ logStartOffset: 0, highWatermark: 100 }))),
  records: (requests) =>
    Promise.resolve(
      requests.map((request) =>
        Array.from({ length: 100 - request.offset }, (_, i): SourceRecord => {
          const offset = request.offset + i;
          return {
            offset,
            timestampMs: 1000 + offset,
            timestampType: 'create-time',
            fingerprint: `f${offset}`,
            keySize: 1,
            valueSize: 2,
          };
        }),
      ),
    ),
};

function pipeline(publish: (messages: StreamMessage[]) => Promise<unknown>) {
  const counters = new OutcomeCounters(metrics.getMeter('test'));
  const logged: unknown[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => logged.push(JSON.parse(line)) });
  const instance = new CollectorPipeline({
    names,
    source: 'src',
    filter: createCommitFilter({
      consumerGroup: 'offsetsync-collector-src',
      groups: { include: ['.*'], exclude: ['^offsetsync-'] },
      topics: { include: ['.*'], exclude: ['^__'] },
    }),
    resolver: new AnchorResolver(source, { cacheSize: 100 }),
    publish,
    counters,
    logger,
    tracer: new BasicTracerProvider().getTracer('test'),
    clock: () => 42,
  });
  return { instance, counters, logged };
}

function commit(
  offset: number,
  group: string,
  partition: number,
  committed: number,
  metadata = '',
): RawOffsetsRecord {
  return {
    offset,
    key: encodeOffsetCommitKey({ group, topic: 'orders', partition }),
    value: encodeOffsetCommitValue({
      group,
      topic: 'orders',
      partition,
      offset: committed,
      commitTimestampMs: 5000 + offset,
      metadata,
    }),
  };
}

describe('collector pipeline', () => {
  it('publishes one anchored event per key with the newest version, after coalescing', async () => {
    const published: StreamMessage[] = [];
    const { instance, counters } = pipeline((messages) => {
      published.push(...messages);
      return Promise.resolve();
    });
    await instance.handleBatch(7, [
      commit(10, 'app', 0, 40),
      commit(11, 'app', 0, 50),
      commit(12, 'app', 1, 3),
    ]);

    expect(published.map((m) => m.msgId)).toEqual(['src:7:11', 'src:7:12']);
    expect(published[0]?.subject).toBe(
      names.committed('src', { group: 'app', topic: 'orders', partition: 0 }),
    );
    expect(published[0]?.headers?.get('Offsetsync-Event')).toBe('OffsetCommitted');
    expect(published[0]?.headers?.get('traceparent')).toMatch(/^00-[0-9a-f]{32}-/);
    const event = OffsetCommitted.decode(published[0]!.payload);
    expect(event).toMatchObject({
      sourceCluster: 'src',
      group: 'app',
      committedOffset: 50,
      commitTimestampMs: 5011,
      version: { offsetsPartition: 7, offsetsOffset: 11 },
      anchorStatus: AnchorStatus.ANCHOR_STATUS_RESOLVED,
      lastConsumed: { offset: 49, timestampMs: 1049, fingerprint: 'f49' },
      nextRecord: { offset: 50, timestampMs: 1050, fingerprint: 'f50' },
      observedAtMs: 42,
    });
    expect(counters.snapshot()).toMatchObject({ committed: 2, superseded: 1 });
    expect(instance.lastEventAtMs).toBe(42);
  });

  it('skips and counts corrupt and unknown records and goes on, logging each kind once', async () => {
    const published: StreamMessage[] = [];
    const { instance, counters, logged } = pipeline((messages) => {
      published.push(...messages);
      return Promise.resolve();
    });
    await instance.handleBatch(0, [
      { offset: 1, key: Buffer.from([0]), value: Buffer.from([1, 2]) },
      { offset: 2, key: encodeGroupMetadataKey('g', 99), value: Buffer.from([0, 3]) },
      { offset: 3, key: encodeGroupMetadataKey('g', 99), value: Buffer.from([0, 3]) },
      commit(4, 'app', 0, 10),
    ]);
    expect(published).toHaveLength(1);
    expect(counters.snapshot()).toMatchObject({ decode_error: 1, unknown_record: 2, committed: 1 });
    expect(logged).toHaveLength(2);
  });

  it('drops filtered groups and topics and the commits offsetsync itself wrote', async () => {
    const published: StreamMessage[] = [];
    const { instance, counters } = pipeline((messages) => {
      published.push(...messages);
      return Promise.resolve();
    });
    const marked = formatCommitMetadata({ origin: 'other', offsetsPartition: 1, offsetsOffset: 2 }, '');
    await instance.handleBatch(0, [
      commit(1, 'offsetsync-collector-src', 0, 10),
      commit(2, 'offsetsync-other', 0, 10),
      commit(3, 'app', 0, 10, marked),
    ]);
    expect(published).toHaveLength(0);
    expect(counters.snapshot()).toMatchObject({
      filtered_own_group: 1,
      filtered_group: 1,
      filtered_offsetsync_commit: 1,
    });
  });

  it('publishes offset tombstones as deletions and reports commits past the log end as invalid', async () => {
    const published: StreamMessage[] = [];
    const { instance, counters } = pipeline((messages) => {
      published.push(...messages);
      return Promise.resolve();
    });
    await instance.handleBatch(3, [
      { offset: 5, key: encodeOffsetCommitKey({ group: 'app', topic: 'orders', partition: 2 }), value: null },
      { offset: 6, key: encodeGroupMetadataKey('gone'), value: null },
      commit(7, 'app', 0, 500),
    ]);
    expect(OffsetDeleted.decode(published[0]!.payload)).toMatchObject({
      group: 'app',
      topic: 'orders',
      partition: 2,
    });
    expect(published[1]?.subject).toBe(names.committedGroup('src', 'gone'));
    expect(OffsetDeleted.decode(published[1]!.payload)).toMatchObject({
      group: 'gone',
      topic: '',
      partition: -1,
    });
    expect(OffsetCommitted.decode(published[2]!.payload).anchorStatus).toBe(
      AnchorStatus.ANCHOR_STATUS_BEYOND_LOG_END,
    );
    expect(counters.snapshot()).toMatchObject({ deleted: 2, invalid_commit: 1, committed: 1 });
  });

  it('rejects when JetStream does not acknowledge, so the worker does not mark the batch done', async () => {
    const { instance } = pipeline(() =>
      Promise.reject(new OffsetSyncError('down', { code: ErrorCodes.NATS_UNREACHABLE })),
    );
    await expect(instance.handleBatch(0, [commit(1, 'app', 0, 10)])).rejects.toMatchObject({
      code: ErrorCodes.NATS_UNREACHABLE,
    });
    expect(instance.lastEventAtMs).toBe(0);
  });
});
