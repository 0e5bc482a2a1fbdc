import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AnchorStatus, ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import type { PartitionBounds, TopicPartition } from '@offsetsync/kafka';
import { AnchorResolver, type AnchorRecordSource, type SourceRecord } from './anchor-resolver.js';

/** One partition's log as offsets with what sits there: data the consumer sees, or not (control, aborted). */
interface Entry {
  offset: number;
  data: boolean;
  timestampMs: number;
  /** Content digest; records with the same one (and timestamp) are identical. Default: per offset. */
  fingerprint?: string;
}

interface Log {
  logStartOffset: number;
  entries: Entry[]; // offsets logStart .. highWatermark-1, with gaps for compaction
  highWatermark: number;
}

function record(entry: Entry): SourceRecord {
  return {
    offset: entry.offset,
    timestampMs: entry.timestampMs,
    timestampType: 'create-time',
    fingerprint: entry.fingerprint ?? `fp-${entry.offset}`,
    keySize: 1,
    valueSize: 1,
  };
}

/** An in-memory source that answers like a broker: data records from an offset on, at most `maxRecords`. */
class MemorySource implements AnchorRecordSource {
  readonly reads: Array<Array<TopicPartition & { offset: number }>> = [];
  boundsCalls = 0;

  constructor(
    private readonly logs: Map<string, Log>,
    private readonly maxRecords = 1000,
  ) {}

  private log(tp: TopicPartition): Log | undefined {
    return this.logs.get(`${tp.topic}/${tp.partition}`);
  }

  bounds(partitions: readonly TopicPartition[]): Promise<Array<PartitionBounds | OffsetSyncError>> {
    this.boundsCalls += 1;
    return Promise.resolve(
      partitions.map((tp) => {
        const log = this.log(tp);
        if (log === undefined) {
          return new OffsetSyncError('unknown topic or partition', { code: ErrorCodes.KAFKA_BROKER_ERROR });
        }
        return { logStartOffset: log.logStartOffset, highWatermark: log.highWatermark };
      }),
    );
  }

  records(
    requests: ReadonlyArray<TopicPartition & { offset: number }>,
  ): Promise<Array<SourceRecord[] | OffsetSyncError>> {
    this.reads.push([...requests]);
    return Promise.resolve(
      requests.map((request) => {
        const log = this.log(request);
        if (log === undefined) return new OffsetSyncError('gone', { code: ErrorCodes.KAFKA_BROKER_ERROR });
        return log.entries
          .filter((e) => e.offset >= request.offset && e.data)
          .slice(0, this.maxRecords)
          .map(record);
      }),
    );
  }
}

const logArbitrary: fc.Arbitrary<Log> = fc
  .record({
    logStartOffset: fc.nat({ max: 50 }),
    kinds: fc.array(fc.constantFrom('data', 'data', 'data', 'control', 'gap'), { maxLength: 60 }),
  })
  .map(({ logStartOffset, kinds }) => {
    const entries: Entry[] = [];
    kinds.forEach((kind, i) => {
      if (kind !== 'gap')
        entries.push({ offset: logStartOffset + i, data: kind === 'data', timestampMs: 1000 + i });
    });
    return { logStartOffset, entries, highWatermark: logStartOffset + kinds.length };
  });

function single(log: Log): Map<string, Log> {
  return new Map([['t/0', log]]);
}

describe('anchor resolver', () => {
  it('finds the last data record before c and the first at or after c, for any log and any c', async () => {
    await fc.assert(
      fc.asyncProperty(
        logArbitrary,
        fc.nat({ max: 120 }),
        fc.integer({ min: 1, max: 5 }),
        async (log, c, maxRecords) => {
          const resolver = new AnchorResolver(new MemorySource(single(log), maxRecords), { cacheSize: 10 });
          const [resolution] = await resolver.resolve([{ topic: 't', partition: 0, offset: c }]);
          const data = log.entries.filter((e) => e.data);
          const expectedLast = data.filter((e) => e.offset < c).at(-1);
          const expectedNext = data.find((e) => e.offset >= c);
          if (c > log.highWatermark) {
            expect(resolution?.status).toBe(AnchorStatus.ANCHOR_STATUS_BEYOND_LOG_END);
            return;
          }
          if (log.logStartOffset >= log.highWatermark) {
            expect(resolution?.status).toBe(AnchorStatus.ANCHOR_STATUS_EMPTY_PARTITION);
            return;
          }
          expect(resolution?.lastConsumed?.offset).toBe(expectedLast?.offset);
          expect(resolution?.nextRecord?.offset).toBe(expectedNext?.offset);
          if (expectedLast === undefined && expectedNext !== undefined) {
            expect(resolution?.status).toBe(AnchorStatus.ANCHOR_STATUS_LOG_START);
          }
          if (expectedLast !== undefined && c === log.highWatermark) {
            expect(resolution?.status).toBe(AnchorStatus.ANCHOR_STATUS_LOG_END);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('skips control records and compaction gaps right before c', async () => {
    const log: Log = {
      logStartOffset: 0,
      highWatermark: 10,
      entries: [
        { offset: 0, data: true, timestampMs: 1 },
        { offset: 1, data: true, timestampMs: 2 },
        // 2..5 compacted away
        { offset: 6, data: false, timestampMs: 3 }, // commit marker of a transaction
        { offset: 7, data: false, timestampMs: 3 },
        { offset: 8, data: true, timestampMs: 4 },
        { offset: 9, data: true, timestampMs: 5 },
      ],
    };
    const resolver = new AnchorResolver(new MemorySource(single(log)), { cacheSize: 10 });
    const [onMarker, inGap] = await resolver.resolve([
      { topic: 't', partition: 0, offset: 7 },
      { topic: 't', partition: 0, offset: 4 },
    ]);
    expect(onMarker).toMatchObject({
      status: AnchorStatus.ANCHOR_STATUS_RESOLVED,
      lastConsumed: { offset: 1 },
      nextRecord: { offset: 8 },
    });
    expect(inGap).toMatchObject({ lastConsumed: { offset: 1 }, nextRecord: { offset: 8 } });
  });

  it('names the edge cases: log start, log end, past the log end, empty partition, missing topic', async () => {
    const logs = new Map<string, Log>([
      [
        't/0',
        {
          logStartOffset: 5,
          highWatermark: 8,
          entries: [5, 6, 7].map((offset) => ({ offset, data: true, timestampMs: offset })),
        },
      ],
      ['empty/0', { logStartOffset: 3, highWatermark: 3, entries: [] }],
    ]);
    const resolver = new AnchorResolver(new MemorySource(logs), { cacheSize: 10 });
    const [atStart, beforeStart, atEnd, pastEnd, empty, missing] = await resolver.resolve([
      { topic: 't', partition: 0, offset: 5 },
      { topic: 't', partition: 0, offset: 2 },
      { topic: 't', partition: 0, offset: 8 },
      { topic: 't', partition: 0, offset: 9 },
      { topic: 'empty', partition: 0, offset: 3 },
      { topic: 'missing', partition: 0, offset: 1 },
    ]);
    expect(atStart).toMatchObject({
      status: AnchorStatus.ANCHOR_STATUS_LOG_START,
      nextRecord: { offset: 5 },
    });
    expect(atStart?.lastConsumed).toBeUndefined();
    expect(beforeStart).toMatchObject({
      status: AnchorStatus.ANCHOR_STATUS_LOG_START,
      nextRecord: { offset: 5 },
    });
    expect(atEnd).toMatchObject({ status: AnchorStatus.ANCHOR_STATUS_LOG_END, lastConsumed: { offset: 7 } });
    expect(atEnd?.nextRecord).toBeUndefined();
    expect(pastEnd?.status).toBe(AnchorStatus.ANCHOR_STATUS_BEYOND_LOG_END);
    expect(pastEnd?.lastConsumed).toBeUndefined();
    expect(empty?.status).toBe(AnchorStatus.ANCHOR_STATUS_EMPTY_PARTITION);
    expect(missing?.status).toBe(AnchorStatus.ANCHOR_STATUS_UNRESOLVABLE);
    expect(missing?.detail).toContain('unknown topic or partition');
  });

  it('marks anchors on a LogAppendTime topic', async () => {
    const source: AnchorRecordSource = {
      bounds: () => Promise.resolve([{ logStartOffset: 0, highWatermark: 2 }]),
      records: (requests) =>
        Promise.resolve(
          requests.map((r) =>
            [0, 1]
              .filter((o) => o >= r.offset)
              .map((offset) => ({
                ...record({ offset, data: true, timestampMs: 7 }),
                timestampType: 'log-append-time' as const,
              })),
          ),
        ),
    };
    const [resolution] = await new AnchorResolver(source, { cacheSize: 1 }).resolve([
      { topic: 't', partition: 0, offset: 1 },
    ]);
    expect(resolution?.status).toBe(AnchorStatus.ANCHOR_STATUS_LOG_APPEND_TIME);
    expect(resolution?.lastConsumed?.offset).toBe(0);
  });

  it('asks once per round for all commits together and answers repeated positions from the cache', async () => {
    const entries = Array.from({ length: 100 }, (_, offset) => ({ offset, data: true, timestampMs: offset }));
    const logs = new Map<string, Log>([
      ['a/0', { logStartOffset: 0, highWatermark: 100, entries }],
      ['a/1', { logStartOffset: 0, highWatermark: 100, entries }],
    ]);
    const source = new MemorySource(logs);
    const resolver = new AnchorResolver(source, { cacheSize: 100 });
    // Twenty groups at the same two positions.
    const commits = Array.from({ length: 20 }, (_, i) => ({ topic: 'a', partition: i % 2, offset: 50 }));
    await resolver.resolve(commits);
    expect(source.boundsCalls).toBe(1);
    expect(source.reads).toHaveLength(1);
    expect(source.reads[0]).toHaveLength(2);
    await resolver.resolve(commits);
    expect(source.boundsCalls).toBe(1);
    expect(resolver.stats).toMatchObject({ hits: 20, misses: 2 });
  });

  it('does not cache a caught-up position: its next record is still to come', async () => {
    const log: Log = {
      logStartOffset: 0,
      highWatermark: 3,
      entries: [0, 1, 2].map((offset) => ({ offset, data: true, timestampMs: offset })),
    };
    const logs = single(log);
    const source = new MemorySource(logs);
    const resolver = new AnchorResolver(source, { cacheSize: 10 });
    expect(
      (await resolver.resolve([{ topic: 't', partition: 0, offset: 3 }]))[0]?.nextRecord,
    ).toBeUndefined();
    log.entries.push({ offset: 3, data: true, timestampMs: 3 });
    log.highWatermark = 4;
    expect((await resolver.resolve([{ topic: 't', partition: 0, offset: 3 }]))[0]?.nextRecord?.offset).toBe(
      3,
    );
  });

  it('fails the whole lookup on a read that may work when retried, instead of calling the commit unresolvable', async () => {
    const source: AnchorRecordSource = {
      bounds: () => Promise.resolve([{ logStartOffset: 0, highWatermark: 10 }]),
      records: () =>
        Promise.resolve([
          new OffsetSyncError('request timed out', { code: ErrorCodes.KAFKA_UNREACHABLE, retryable: true }),
        ]),
    };
    await expect(
      new AnchorResolver(source, { cacheSize: 1 }).resolve([{ topic: 't', partition: 0, offset: 5 }]),
    ).rejects.toMatchObject({
      code: ErrorCodes.KAFKA_UNREACHABLE,
    });
  });

  it('says how far around each commit the source records are distinct, reading past what the anchors need', async () => {
    const entries: Entry[] = Array.from({ length: 40 }, (_, offset) => ({
      offset,
      data: offset !== 20,
      timestampMs: 9,
      // 26 is a retried send of 25; everything else is distinct.
      fingerprint: offset === 26 ? 'fp-25' : `fp-${offset}`,
    }));
    const source = new MemorySource(single({ logStartOffset: 0, highWatermark: 40, entries }), 4);
    const resolver = new AnchorResolver(source, { cacheSize: 10, distinctCheckRecords: 8 });
    const [far, near, atEnd] = await resolver.resolve([
      { topic: 't', partition: 0, offset: 10 },
      { topic: 't', partition: 0, offset: 23 },
      { topic: 't', partition: 0, offset: 38 },
    ]);
    // Nothing identical within 8 records of 10; 25 and 26 are the 3rd and 4th data records from 23.
    expect(far?.distinctAround).toBe(8);
    expect(near?.distinctAround).toBe(3);
    // Only 2 records after 38 were there to check.
    expect(atEnd?.distinctAround).toBe(2);
    // Off by default.
    const [unchecked] = await new AnchorResolver(source, { cacheSize: 10 }).resolve([
      { topic: 't', partition: 0, offset: 10 },
    ]);
    expect(unchecked?.distinctAround).toBe(0);
  });

  it('finds the same distinct_around for commits checked together, sharing reads, as for each alone', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 80 }), { minLength: 1, maxLength: 50 }),
        fc.array(fc.integer({ min: 0, max: 55 }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 12 }),
        async (contents, offsets, limit) => {
          const entries: Entry[] = contents.map((content, offset) => ({
            offset,
            data: true,
            timestampMs: 9,
            // Some identical records, far apart and near.
            fingerprint: `fp-${content}`,
          }));
          const logs = () => single({ logStartOffset: 0, highWatermark: contents.length, entries });
          const commits = offsets.map((offset) => ({ topic: 't', partition: 0, offset }));
          const together = await new AnchorResolver(new MemorySource(logs(), 3), {
            cacheSize: 100,
            distinctCheckRecords: limit,
          }).resolve(commits);
          for (const [i, commit] of commits.entries()) {
            const [alone] = await new AnchorResolver(new MemorySource(logs(), 3), {
              cacheSize: 100,
              distinctCheckRecords: limit,
            }).resolve([commit]);
            expect(together[i]?.distinctAround).toBe(alone?.distinctAround);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
