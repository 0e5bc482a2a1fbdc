// Decodes the corpus of real `__consumer_offsets` records that scripts/capture-offsets-corpus.ts took
// from a Kafka broker, and checks the corpus still covers what the decoder must handle. No servers.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  decodeOffsetsTopicRecord,
  MAX_OFFSET_COMMIT_VALUE_VERSION,
  type OffsetsTopicRecord,
} from '../../services/collector/src/offsets-topic-decoder.js';

interface CorpusRecord {
  scenario: string;
  offsetsPartition: number;
  offset: number;
  keyType: number;
  valueVersion: number | null;
  keyBase64: string;
  valueBase64: string | null;
  inTransaction: boolean;
  aborted: boolean;
  expected: {
    kind: OffsetsTopicRecord['kind'];
    group?: string;
    topic?: string;
    partition?: number;
    offset?: number;
    metadata?: string;
    recordType?: number;
  };
}

interface Corpus {
  kafkaVersion: string;
  capturedAt: string;
  scenarios: Record<string, { group: string; description: string }>;
  controlMarkers: Array<{ offsetsPartition: number; offset: number; type: 'COMMIT' | 'ABORT' }>;
  records: CorpusRecord[];
}

const corpus = JSON.parse(
  readFileSync(new URL('../fixtures/offsets-topic-corpus.json', import.meta.url), 'utf8'),
) as Corpus;

function bytesOf(record: CorpusRecord): { key: Buffer; value: Buffer | null } {
  return {
    key: Buffer.from(record.keyBase64, 'base64'),
    value: record.valueBase64 === null ? null : Buffer.from(record.valueBase64, 'base64'),
  };
}

function decode(record: CorpusRecord): OffsetsTopicRecord {
  const { key, value } = bytesOf(record);
  return decodeOffsetsTopicRecord(key, value);
}

const label = (r: CorpusRecord): string =>
  `${r.scenario} ${r.offsetsPartition}@${r.offset} type ${r.keyType} ${r.expected.kind}`;

describe('real __consumer_offsets corpus', () => {
  it('was captured from a broker and is small enough to read', () => {
    expect(corpus.kafkaVersion).toMatch(/^\d+\.\d+\.\d+$/);
    expect(Number.isNaN(Date.parse(corpus.capturedAt))).toBe(false);
    expect(corpus.records.length).toBeGreaterThan(0);
    expect(corpus.records.length).toBeLessThan(200);
  });

  it.each(corpus.records.map((r) => [label(r), r] as const))('decodes %s as captured', (_, record) => {
    const { key, value } = bytesOf(record);
    // The recorded facts are the bytes' own leading int16s.
    expect(key.readInt16BE(0)).toBe(record.keyType);
    expect(value === null ? null : value.readInt16BE(0)).toBe(record.valueVersion);

    const decoded = decode(record);
    expect(decoded).toMatchObject(record.expected);
    if (decoded.kind === 'offset-commit') {
      expect(decoded.keyType).toBe(record.keyType);
      expect(decoded.valueVersion).toBe(record.valueVersion);
    }
    if (decoded.kind === 'group-deleted' || decoded.kind === 'coordinator-record') {
      expect(decoded.recordType).toBe(record.keyType);
    }
  });

  it('covers offset commits (key type 1) and classic group metadata (key type 2)', () => {
    const keyTypes = new Set(corpus.records.map((r) => r.keyType));
    expect(keyTypes).toContain(1);
    expect(keyTypes).toContain(2);
  });

  it('covers the KIP-848 consumer group record types the broker writes', () => {
    const newer = [...new Set(corpus.records.map((r) => r.keyType).filter((t) => t >= 3 && t <= 8))].sort();
    expect(newer.length).toBeGreaterThan(0);
    // What Kafka 4.1 wrote: group metadata (3), member metadata (5), target assignment metadata (6)
    // and member (7), current member assignment (8); partition metadata (4) only as a tombstone when
    // the group is deleted.
    expect(newer).toEqual([3, 4, 5, 6, 7, 8]);
    const withValue = corpus.records.filter((r) => r.keyType === 4 && r.valueVersion !== null);
    expect(withValue).toEqual([]);
  });

  it('records which value versions the broker writes', () => {
    const versions = (keyTypes: number[]): number[] =>
      [
        ...new Set(
          corpus.records
            .filter((r) => keyTypes.includes(r.keyType) && r.valueVersion !== null)
            .map((r) => r.valueVersion as number),
        ),
      ].sort();
    const offsetCommitVersions = versions([0, 1]);
    expect(Math.max(...offsetCommitVersions)).toBeLessThanOrEqual(MAX_OFFSET_COMMIT_VALUE_VERSION);
    // Kafka 4.1 writes every offset commit (plain, admin, transactional) as value version 4 and classic
    // group metadata as version 3; the KIP-848 records are all at version 0.
    expect(offsetCommitVersions).toEqual([4]);
    expect(versions([2])).toEqual([3]);
    expect(versions([3, 4, 5, 6, 7, 8])).toEqual([0]);
  });

  it('covers commits with and without metadata', () => {
    const commits = corpus.records.filter((r) => r.expected.kind === 'offset-commit');
    expect(commits.some((r) => r.expected.metadata === '')).toBe(true);
    expect(commits.some((r) => (r.expected.metadata ?? '').length > 0)).toBe(true);
  });

  it('covers tombstones of offsets, of a classic group and of a KIP-848 group', () => {
    const deletedOffsets = corpus.records.filter((r) => decode(r).kind === 'offset-deleted');
    expect(new Set(deletedOffsets.map((r) => r.scenario))).toEqual(
      new Set(['offset-deletion', 'classic-group-deletion', 'consumer-group-deletion']),
    );
    const deletedGroups = corpus.records
      .map(decode)
      .filter((d) => d.kind === 'group-deleted')
      .map((d) => [d.group, d.recordType]);
    expect(deletedGroups).toEqual([
      [corpus.scenarios['classic-group-deletion']?.group, 2],
      [corpus.scenarios['consumer-group-deletion']?.group, 3],
    ]);
  });

  it('marks exactly the aborted transaction records as aborted', () => {
    const aborted = corpus.records.filter((r) => r.aborted);
    expect(aborted.length).toBeGreaterThan(0);
    expect(aborted.every((r) => r.inTransaction && r.scenario === 'transactional-abort')).toBe(true);
    expect(aborted.every((r) => r.expected.kind === 'offset-commit')).toBe(true);
    expect(corpus.records.filter((r) => r.scenario === 'transactional-abort' && r.inTransaction)).toEqual(
      aborted,
    );

    const committedTxn = corpus.records.filter((r) => r.scenario === 'transactional-commit');
    expect(committedTxn.length).toBeGreaterThan(0);
    expect(committedTxn.every((r) => r.inTransaction && !r.aborted)).toBe(true);
    // Transactional records belong to the two transactional scenarios only.
    expect(corpus.records.filter((r) => r.inTransaction && !r.scenario.startsWith('transactional-'))).toEqual(
      [],
    );
    expect(corpus.controlMarkers.map((m) => m.type).sort()).toEqual(['ABORT', 'COMMIT']);
    // Each transaction ends with its marker after its records, in the same partition.
    for (const [scenario, type] of [
      ['transactional-commit', 'COMMIT'],
      ['transactional-abort', 'ABORT'],
    ] as const) {
      const records = corpus.records.filter((r) => r.scenario === scenario);
      const partition = records[0]?.offsetsPartition;
      const marker = corpus.controlMarkers.find((m) => m.offsetsPartition === partition && m.type === type);
      expect(marker).toBeDefined();
      expect(
        records.every((r) => r.offsetsPartition === partition && r.offset < (marker?.offset ?? -1)),
      ).toBe(true);
    }
  });

  it('replayed as a read_committed reader sees it, leaves the offsets the broker reported', () => {
    // What the collector would hold after reading the corpus in log order without aborted records.
    const state = new Map<string, number>();
    const ordered = [...corpus.records].sort(
      (a, b) => a.offsetsPartition - b.offsetsPartition || a.offset - b.offset,
    );
    for (const record of ordered) {
      if (record.aborted) continue;
      const decoded = decode(record);
      if (decoded.kind === 'offset-commit') {
        state.set(`${decoded.group}/${decoded.topic}/${decoded.partition}`, decoded.offset);
      } else if (decoded.kind === 'offset-deleted') {
        state.delete(`${decoded.group}/${decoded.topic}/${decoded.partition}`);
      } else if (decoded.kind === 'group-deleted') {
        for (const key of state.keys()) if (key.startsWith(`${decoded.group}/`)) state.delete(key);
      }
    }
    expect(Object.fromEntries([...state].sort())).toEqual({
      'corpus-classic/corpus-orders/0': 2,
      'corpus-classic/corpus-orders/1': 2,
      'corpus-classic/corpus-orders/2': 2,
      'corpus-consumer-protocol/corpus-orders/0': 2,
      'corpus-consumer-protocol/corpus-orders/1': 2,
      'corpus-consumer-protocol/corpus-orders/2': 2,
      'corpus-offset-deletion/corpus-orders/0': 1,
      'corpus-offset-deletion/corpus-orders/1': 1,
      'corpus-offset-deletion/corpus-orders/2': 1,
      'corpus-txn-committed/corpus-orders/0': 2,
      'corpus-txn-committed/corpus-orders/1': 1,
    });
  });
});
