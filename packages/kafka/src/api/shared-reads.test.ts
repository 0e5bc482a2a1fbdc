import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import type { FetchAnswer, FetchRequest } from '../types.js';
import { answerFromRead, planSharedReads, readShared } from './shared-reads.js';

/** A batch of a fake partition log: data records at some offsets of [first, last], or a marker batch. */
interface Batch {
  first: number;
  last: number;
  /** Offsets holding data records (a marker or aborted batch has none). */
  data: number[];
  bytes: number;
}

/**
 * Reads like a broker: whole batches from the one holding `offset` (or the next one) on, while they fit in
 * `maxBytes`; the first batch comes even when larger, unless `strict` (a partition that is not the
 * first of the response may then return nothing).
 */
function brokerRead(log: readonly Batch[], request: FetchRequest, strict = false): FetchAnswer {
  const budget = request.maxBytes ?? 1 << 20;
  const records: FetchAnswer['records'] = [];
  let nextOffset = request.offset;
  let used = 0;
  for (const batch of log) {
    if (batch.last < request.offset) continue;
    if (used + batch.bytes > budget && (used > 0 || strict)) break;
    used += batch.bytes;
    nextOffset = batch.last + 1;
    for (const offset of batch.data) {
      if (offset >= request.offset) {
        records.push({
          offset,
          timestampMs: offset,
          timestampType: 'create-time',
          key: null,
          value: null,
          headers: {},
        });
      }
    }
  }
  return {
    topic: request.topic,
    partition: request.partition,
    requestedOffset: request.offset,
    records,
    nextOffset,
    highWatermark: log.at(-1) === undefined ? 0 : log.at(-1)!.last + 1,
    lastStableOffset: -1,
    logStartOffset: 0,
  };
}

const outOfRange = new OffsetSyncError('offset out of range', { code: ErrorCodes.KAFKA_BROKER_ERROR });

const batchArb = fc.record({
  size: fc.integer({ min: 1, max: 6 }),
  marker: fc.boolean(),
  gapMask: fc.integer({ min: 0, max: 63 }),
  bytes: fc.integer({ min: 10, max: 400 }),
});

const logArb = fc.array(batchArb, { minLength: 0, maxLength: 40 }).map((specs) => {
  const log: Batch[] = [];
  let next = 0;
  for (const spec of specs) {
    const first = next;
    const last = first + spec.size - 1;
    const data = spec.marker
      ? []
      : Array.from({ length: spec.size }, (_, i) => first + i).filter(
          (_, i) => ((spec.gapMask >> i) & 1) === 0,
        );
    log.push({ first, last, data, bytes: spec.bytes });
    next = last + 1;
  }
  return log;
});

describe('readShared', () => {
  it('answers every request with the records a read of its own would see, for any log and offsets', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(logArb, { minLength: 1, maxLength: 3 }),
        fc.array(
          fc.record({ partition: fc.nat(2), offset: fc.nat(250), maxBytes: fc.constantFrom(100, 300, 1000) }),
          {
            minLength: 1,
            maxLength: 30,
          },
        ),
        fc.boolean(),
        fc.nat(40),
        async (logs, raw, strict, logStart) => {
          const requests: FetchRequest[] = raw.map((r) => ({
            topic: 't',
            ...r,
            partition: r.partition % logs.length,
          }));
          const answers = await readShared(requests, (reads) =>
            Promise.resolve(
              reads.map((read) =>
                // Below the log start a broker answers OFFSET_OUT_OF_RANGE for that read alone.
                read.offset < logStart
                  ? { ...brokerRead([], read), error: outOfRange }
                  : brokerRead(logs[read.partition]!, read, strict),
              ),
            ),
          );
          requests.forEach((request, i) => {
            const answer = answers[i]!;
            const log = logs[request.partition]!;
            expect(answer.requestedOffset).toBe(request.offset);
            // A failed read fails only requests that would have failed on their own.
            expect(answer.error !== undefined).toBe(request.offset < logStart);
            if (answer.error !== undefined) return;
            expect(answer.nextOffset).toBeGreaterThanOrEqual(request.offset);
            // Exactly the data records of [offset, nextOffset): nothing skipped, nothing invented.
            const truth = log
              .flatMap((b) => b.data)
              .filter((o) => o >= request.offset && o < answer.nextOffset);
            expect(answer.records.map((r) => r.offset)).toEqual(truth);
            // An answer that read nothing says only what a read of its own would have said.
            if (answer.nextOffset === request.offset) {
              expect(brokerRead(log, request, strict).nextOffset).toBe(request.offset);
            }
          });
        },
      ),
      { numRuns: 500 },
    );
  });

  it('reads a partition once for many nearby offsets, and once more for offsets the first read missed', async () => {
    const log: Batch[] = Array.from({ length: 100 }, (_, i) => ({
      first: i * 10,
      last: i * 10 + 9,
      data: Array.from({ length: 10 }, (_, k) => i * 10 + k),
      bytes: 100,
    }));
    const reads: FetchRequest[][] = [];
    const requests: FetchRequest[] = [
      ...Array.from({ length: 50 }, (_, i) => ({
        topic: 't',
        partition: 0,
        offset: 100 + i,
        maxBytes: 1000,
      })),
      ...Array.from({ length: 5 }, (_, i) => ({ topic: 't', partition: 0, offset: 900 + i, maxBytes: 1000 })),
    ];
    const answers = await readShared(requests, (round) => {
      reads.push(round);
      return Promise.resolve(round.map((read) => brokerRead(log, read)));
    });
    // Round one: one read from 100 (covers 100..199). Round two: one read from 900.
    expect(reads.map((round) => round.map((r) => r.offset))).toEqual([[100], [900]]);
    expect(answers[49]!.records[0]?.offset).toBe(149);
    expect(answers[54]!.records[0]?.offset).toBe(904);
  });
});

describe('planSharedReads', () => {
  it('starts a read per partition and per span, asking for the largest byte limit of its requests', () => {
    const plan = planSharedReads(
      [
        { topic: 'a', partition: 0, offset: 7, maxBytes: 10 },
        { topic: 'a', partition: 0, offset: 3, maxBytes: 50 },
        { topic: 'a', partition: 1, offset: 3 },
        { topic: 'a', partition: 0, offset: 20, maxBytes: 10 },
      ],
      () => 10,
    );
    expect(plan).toEqual([
      { read: { topic: 'a', partition: 0, offset: 3, maxBytes: 50 }, requests: [1, 0] },
      { read: { topic: 'a', partition: 0, offset: 20, maxBytes: 10 }, requests: [3] },
      { read: { topic: 'a', partition: 1, offset: 3, maxBytes: undefined }, requests: [2] },
    ]);
  });
});

describe('answerFromRead', () => {
  const read = brokerRead(
    [
      { first: 0, last: 4, data: [0, 1, 2, 3, 4], bytes: 10 },
      { first: 5, last: 5, data: [], bytes: 10 },
      { first: 6, last: 9, data: [6, 9], bytes: 10 },
    ],
    { topic: 't', partition: 0, offset: 2, maxBytes: 20 },
  );

  it('slices a read that reached the offset, and refuses one that did not', () => {
    expect(read.nextOffset).toBe(6);
    expect(answerFromRead(read, 4)?.records.map((r) => r.offset)).toEqual([4]);
    // Only a marker between 5 and the read's end: no records, and where to go on.
    expect(answerFromRead(read, 5)).toMatchObject({ requestedOffset: 5, records: [], nextOffset: 6 });
    expect(answerFromRead(read, 6)).toBeUndefined();
  });

  it('leaves a failed read to the request it started at', () => {
    const failed = {
      ...read,
      records: [],
      error: new OffsetSyncError('before the log start', { code: ErrorCodes.KAFKA_BROKER_ERROR }),
    };
    expect(answerFromRead(failed, 2)).toBe(failed);
    expect(answerFromRead(failed, 4)).toBeUndefined();
  });
});
