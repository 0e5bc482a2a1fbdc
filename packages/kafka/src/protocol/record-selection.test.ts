import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { selectRecords } from './record-selection.js';
import type { DecodedRecord } from './responses.js';

type Control = 'ABORT' | 'COMMIT';

/** The records kafkajs would decode from one batch. */
function batch(
  firstOffset: number,
  count: number,
  options: { producerId?: number; transactional?: boolean; control?: Control; logAppendTime?: boolean } = {},
): DecodedRecord[] {
  const context = {
    firstOffset: String(firstOffset),
    lastOffsetDelta: count - 1,
    producerId: String(options.producerId ?? -1),
    inTransaction: options.transactional ?? options.control !== undefined,
    isControlBatch: options.control !== undefined,
    timestampType: options.logAppendTime === true ? 1 : 0,
  };
  return Array.from({ length: count }, (_, i) => ({
    offset: String(firstOffset + i),
    timestamp: String(1_000 + firstOffset + i),
    key: options.control === undefined ? Buffer.from(`k${firstOffset + i}`) : controlKey(options.control),
    value: options.control === undefined ? Buffer.from('v') : Buffer.alloc(6),
    headers: {},
    isControlRecord: options.control !== undefined,
    batchContext: context,
  }));
}

function controlKey(type: Control): Buffer {
  const key = Buffer.alloc(4);
  key.writeInt16BE(0, 0);
  key.writeInt16BE(type === 'ABORT' ? 0 : 1, 2);
  return key;
}

const offsetsOf = (result: { records: { offset: number }[] }) => result.records.map((r) => r.offset);

describe('selectRecords', () => {
  it('drops the records of the first batch that lie before the requested offset', () => {
    const result = selectRecords([...batch(0, 5), ...batch(5, 2)], {
      requestedOffset: 3,
      isolation: 'read_committed',
      abortedTransactions: [],
    });
    expect(offsetsOf(result)).toEqual([3, 4, 5, 6]);
    expect(result.nextOffset).toBe(7);
    expect(result.records[0]).toMatchObject({ timestampMs: 1_003, timestampType: 'create-time' });
    expect(result.records[0]?.key?.toString()).toBe('k3');
  });

  it('skips aborted transactions and control batches under read_committed', () => {
    const messages = [
      ...batch(0, 2, { producerId: 8, transactional: true }),
      ...batch(2, 1, { producerId: 8, control: 'COMMIT' }),
      ...batch(3, 3, { producerId: 7, transactional: true }),
      ...batch(6, 1, { producerId: 7, control: 'ABORT' }),
      ...batch(7, 1),
    ];
    const aborted = [{ producerId: '7', firstOffset: '3' }];
    const committed = selectRecords(messages, {
      requestedOffset: 0,
      isolation: 'read_committed',
      abortedTransactions: aborted,
    });
    expect(offsetsOf(committed)).toEqual([0, 1, 7]);
    expect(committed.nextOffset).toBe(8);
    const all = selectRecords(messages, {
      requestedOffset: 0,
      isolation: 'read_uncommitted',
      abortedTransactions: aborted,
    });
    expect(offsetsOf(all)).toEqual([0, 1, 3, 4, 5, 7]);
  });

  it('keeps a committed transaction interleaved with an aborted one of another producer', () => {
    const messages = [
      ...batch(0, 2, { producerId: 1, transactional: true }),
      ...batch(2, 2, { producerId: 2, transactional: true }),
      ...batch(4, 1, { producerId: 1, transactional: true }),
      ...batch(5, 1, { producerId: 1, control: 'ABORT' }),
      ...batch(6, 1, { producerId: 2, control: 'COMMIT' }),
    ];
    const result = selectRecords(messages, {
      requestedOffset: 0,
      isolation: 'read_committed',
      abortedTransactions: [{ producerId: '1', firstOffset: '0' }],
    });
    expect(offsetsOf(result)).toEqual([2, 3]);
  });

  it('reads a producer again after its abort marker', () => {
    const messages = [
      ...batch(0, 2, { producerId: 1, transactional: true }),
      ...batch(2, 1, { producerId: 1, control: 'ABORT' }),
      ...batch(3, 2, { producerId: 1, transactional: true }),
      ...batch(5, 1, { producerId: 1, control: 'COMMIT' }),
    ];
    const result = selectRecords(messages, {
      requestedOffset: 0,
      isolation: 'read_committed',
      abortedTransactions: [{ producerId: '1', firstOffset: '0' }],
    });
    expect(offsetsOf(result)).toEqual([3, 4]);
    expect(result.nextOffset).toBe(6);
  });

  it('reports log-append time, and the timestamp type of legacy message sets', () => {
    const [appended] = selectRecords(batch(0, 1, { logAppendTime: true }), {
      requestedOffset: 0,
      isolation: 'read_committed',
      abortedTransactions: [],
    }).records;
    expect(appended?.timestampType).toBe('log-append-time');
    const legacy: DecodedRecord[] = [
      { offset: '0', timestamp: '5', key: null, value: null, attributes: 0x08 },
      { offset: '1', timestamp: '6', key: null, value: Buffer.from('x'), attributes: 0 },
    ];
    const result = selectRecords(legacy, {
      requestedOffset: 0,
      isolation: 'read_committed',
      abortedTransactions: [],
    });
    expect(result.records.map((r) => r.timestampType)).toEqual(['log-append-time', 'create-time']);
    expect(result.records[0]).toMatchObject({ key: null, value: null, headers: {} });
    expect(result.nextOffset).toBe(2);
  });

  it('answers the requested offset as next offset when nothing came back', () => {
    expect(
      selectRecords([], { requestedOffset: 42, isolation: 'read_committed', abortedTransactions: [] }),
    ).toEqual({
      records: [],
      nextOffset: 42,
    });
  });

  // A model of a partition log written by transactional and plain producers, and of what a broker sends
  // for a fetch: the batches from the one holding the fetch offset on, and the aborted transactions
  // whose marker is at or after the fetch offset. read_committed must show exactly the records of
  // committed transactions and of plain producers.
  it('shows exactly the committed and non-transactional records (model-based)', () => {
    const step = fc.record({
      producer: fc.integer({ min: 0, max: 1 }),
      kind: fc.constantFrom('data', 'data', 'end', 'plain'),
      commit: fc.boolean(),
      size: fc.integer({ min: 1, max: 3 }),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), fc.nat(), (steps, fetchSeed) => {
        const log: DecodedRecord[][] = [];
        const visible = new Set<number>();
        const aborted: { producerId: string; firstOffset: number; markerOffset: number }[] = [];
        const open = new Map<number, { firstOffset: number; offsets: number[] }>();
        let next = 0;
        const end = (producer: number, commit: boolean) => {
          const txn = open.get(producer);
          if (txn === undefined) return;
          log.push(batch(next, 1, { producerId: producer, control: commit ? 'COMMIT' : 'ABORT' }));
          if (commit) txn.offsets.forEach((o) => visible.add(o));
          else
            aborted.push({ producerId: String(producer), firstOffset: txn.firstOffset, markerOffset: next });
          open.delete(producer);
          next += 1;
        };
        for (const s of steps) {
          if (s.kind === 'plain') {
            log.push(batch(next, s.size));
            for (let i = 0; i < s.size; i += 1) visible.add(next + i);
          } else if (s.kind === 'data') {
            const txn = open.get(s.producer) ?? { firstOffset: next, offsets: [] };
            open.set(s.producer, txn);
            log.push(batch(next, s.size, { producerId: s.producer, transactional: true }));
            for (let i = 0; i < s.size; i += 1) txn.offsets.push(next + i);
          } else {
            end(s.producer, s.commit);
            continue;
          }
          next += s.size;
        }
        for (const producer of [...open.keys()]) end(producer, fetchSeed % 2 === 0);

        const requestedOffset = fetchSeed % (next + 1);
        const sent = log.filter((b) => {
          const last = b[b.length - 1];
          return last !== undefined && Number(last.offset) >= requestedOffset;
        });
        const result = selectRecords(sent.flat(), {
          requestedOffset,
          isolation: 'read_committed',
          abortedTransactions: aborted
            .filter((a) => a.markerOffset >= requestedOffset)
            .map((a) => ({ producerId: a.producerId, firstOffset: String(a.firstOffset) })),
        });
        const expected = [...visible].filter((o) => o >= requestedOffset).sort((a, b) => a - b);
        expect(offsetsOf(result)).toEqual(expected);
        expect(result.nextOffset).toBe(Math.max(next, requestedOffset));
      }),
      { numRuns: 500 },
    );
  });
});
