// The collector worker's acknowledgement and heartbeat reporting, with the real pipeline over an in-memory
// source and publisher: no Kafka, no NATS.
import { metrics } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, Names, OffsetSyncError } from '@offsetsync/contracts';
import type { PartitionBounds } from '@offsetsync/kafka';
import { AnchorResolver, type AnchorRecordSource, type SourceRecord } from './anchor-resolver.js';
import { CollectorPipeline } from './collector-pipeline.js';
import { CollectorWorker, type IntakeHandlers } from './collector-worker.js';
import { createCommitFilter } from './commit-filter.js';
import type { RawOffsetsRecord } from './offsets-topic-decoder.js';
import { encodeOffsetCommitKey, encodeOffsetCommitValue } from './offsets-topic-encoder.js';
import { OutcomeCounters } from './outcome-counters.js';

/** Every partition holds records 0..99; `boundsFail` makes the next bounds lookups fail with that error. */
function fakeSource(): AnchorRecordSource & { boundsFail: OffsetSyncError | undefined } {
  const source = {
    boundsFail: undefined as OffsetSyncError | undefined,
    bounds: (partitions: readonly unknown[]) =>
      Promise.resolve(
        partitions.map(
          (): PartitionBounds | OffsetSyncError =>
            source.boundsFail ?? { logStartOffset: 0, highWatermark: 100 },
        ),
      ),
    records: (requests: ReadonlyArray<{ offset: number }>) =>
      Promise.resolve(
        requests.map((request) =>
          Array.from({ length: 100 - request.offset }, (_, i): SourceRecord => ({
            offset: request.offset + i,
            timestampMs: 1000 + request.offset + i,
            timestampType: 'create-time',
            fingerprint: `f${request.offset + i}`,
            keySize: 1,
            valueSize: 1,
          })),
        ),
      ),
  };
  return source;
}

function worker() {
  const source = fakeSource();
  const publish = { fail: undefined as OffsetSyncError | undefined, count: 0 };
  const counters = new OutcomeCounters(metrics.getMeter('test'));
  const pipeline = new CollectorPipeline({
    names: new Names('t'),
    source: 'src',
    filter: createCommitFilter({
      consumerGroup: 'offsetsync-collector-src',
      groups: { include: ['.*'], exclude: [] },
      topics: { include: ['.*'], exclude: [] },
    }),
    // No cache: every batch asks the source again.
    resolver: new AnchorResolver(source, { cacheSize: 0 }),
    publish: (messages) => {
      if (publish.fail !== undefined) return Promise.reject(publish.fail);
      publish.count += messages.length;
      return Promise.resolve();
    },
    counters,
    logger: pino({ level: 'silent' }),
    tracer: new BasicTracerProvider().getTracer('test'),
  });
  let intake: IntakeHandlers | undefined;
  const instance = new CollectorWorker({
    pipeline,
    counters,
    createIntake: (handlers) => {
      intake = handlers;
      return { start: () => undefined, stop: () => Promise.resolve() };
    },
    close: () => Promise.resolve(),
  });
  return { instance, intake: intake!, source, publish };
}

function commit(offset: number, committed: number): RawOffsetsRecord {
  return {
    offset,
    key: encodeOffsetCommitKey({ group: 'app', topic: 'orders', partition: 0 }),
    value: encodeOffsetCommitValue({
      group: 'app',
      topic: 'orders',
      partition: 0,
      offset: committed,
      commitTimestampMs: 5000,
    }),
  };
}

const codes = (w: CollectorWorker) => w.heartbeat.problems().map((p) => p.code);

describe('collector worker', () => {
  it('clears a KAFKA_BROKER_ERROR from its heartbeat once a batch is handled again', async () => {
    const { instance, intake, source } = worker();
    source.boundsFail = new OffsetSyncError('listOffsets failed: broker error NOT_LEADER_OR_FOLLOWER (6)', {
      code: ErrorCodes.KAFKA_BROKER_ERROR,
      retryable: true,
    });
    await expect(intake.handleBatch(4, [commit(10, 20)])).rejects.toMatchObject({
      code: ErrorCodes.KAFKA_BROKER_ERROR,
    });
    expect(codes(instance)).toEqual([ErrorCodes.KAFKA_BROKER_ERROR]);

    source.boundsFail = undefined;
    await intake.handleBatch(4, [commit(10, 20)]);
    expect(codes(instance)).toEqual([]);
  });

  it("keeps each area's problem until that area works again, whichever code it had", async () => {
    const { instance, intake, publish } = worker();
    intake.onProblem(
      new OffsetSyncError('cannot start reading __consumer_offsets', { code: ErrorCodes.KAFKA_UNREACHABLE }),
    );
    publish.fail = new OffsetSyncError('JetStream did not acknowledge 1 message(s)', {
      code: ErrorCodes.NATS_UNREACHABLE,
    });
    await expect(intake.handleBatch(0, [commit(1, 20)])).rejects.toThrow();
    expect(codes(instance).sort()).toEqual([ErrorCodes.KAFKA_UNREACHABLE, ErrorCodes.NATS_UNREACHABLE]);

    // The consumer joins its group again: reading works, publishing still does not.
    intake.onProblem(undefined);
    expect(codes(instance)).toEqual([ErrorCodes.NATS_UNREACHABLE]);

    publish.fail = undefined;
    await intake.handleBatch(0, [commit(1, 20)]);
    expect(codes(instance)).toEqual([]);
  });

  it('reports as progress only positions whose events JetStream acknowledged', async () => {
    const { instance, intake, publish } = worker();
    publish.fail = new OffsetSyncError('down', { code: ErrorCodes.NATS_UNREACHABLE });
    await expect(intake.handleBatch(3, [commit(7, 20), commit(8, 30)])).rejects.toThrow();
    expect(instance.heartbeat.progress().lastVersion).toBeUndefined();

    publish.fail = undefined;
    await intake.handleBatch(3, [commit(7, 20), commit(8, 30)]);
    expect(instance.heartbeat.progress().lastVersion).toEqual({ offsetsPartition: 3, offsetsOffset: 8 });
    expect(instance.heartbeat.progress().eventsByOutcome).toMatchObject({ committed: 1, superseded: 2 });
    expect(publish.count).toBe(1);
  });
});
