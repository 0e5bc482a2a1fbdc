// Decoder throughput: how many `__consumer_offsets` records per second decodeOffsetsTopicRecord turns
// into typed records on one core.
//
//   npm run -s bench:decoder                 # 5 s measured after 1 s of warm-up
//   BENCH_SECONDS=20 npm run -s bench:decoder
//
// Builds a fixed pool of records with the encoder, in a mix like a busy cluster's offsets topic
// (mostly offset commits), decodes the pool over and over, prints a progress line a second and, last,
// one JSON line with the result. The pool is generated from a fixed seed, so runs are comparable.
import { KafkaWriter } from '@offsetsync/kafka';
import { decodeOffsetsTopicRecord } from '../services/collector/src/offsets-topic-decoder.js';
import {
  encodeGroupMetadataKey,
  encodeOffsetCommitKey,
  encodeOffsetCommitValue,
} from '../services/collector/src/offsets-topic-encoder.js';

/** Records per second the decoder must reach; below it the run still reports, and exits 1. */
const TARGET_RECORDS_PER_SEC = 300_000;
const POOL_SIZE = 100_000;
const WARMUP_SECONDS = 1;
const SECONDS = positiveNumber(process.env.BENCH_SECONDS, 5);

/** Share of each record category in the pool. */
const MIX = {
  offset_commit_v3: 0.425,
  offset_commit_v4: 0.425,
  tombstone: 0.05,
  group_metadata: 0.05,
  coordinator_record: 0.05,
} as const;
type Category = keyof typeof MIX;

interface RawRecord {
  key: Buffer;
  value: Buffer | null;
}

function positiveNumber(text: string | undefined, fallback: number): number {
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`BENCH_SECONDS must be a positive number: ${text}`);
  return value;
}

/** mulberry32: a small seeded generator, so every run decodes the same pool. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function buildPool(size: number): { records: RawRecord[]; counts: Record<Category, number> } {
  const random = seededRandom(848);
  const int = (min: number, max: number): number => min + Math.floor(random() * (max - min + 1));
  const word = (length: number): string => {
    const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789-._';
    let text = '';
    for (let i = 0; i < length; i++) text += alphabet[int(0, alphabet.length - 1)];
    return text;
  };
  // Real clusters have far fewer groups and topics than commits: names repeat.
  const groups = Array.from({ length: 500 }, () => `grp.${word(int(16, 56))}`);
  const topics = Array.from({ length: 300 }, () => `topic.${word(int(14, 54))}`);
  const topicIds = topics.map(() => Buffer.from(Array.from({ length: 16 }, () => int(0, 255))));
  const pick = <T>(items: readonly T[]): T => items[int(0, items.length - 1)] as T;
  const now = Date.UTC(2025, 0, 1);

  const offsetCommit = (valueVersion: 3 | 4): RawRecord => {
    const topicIndex = int(0, topics.length - 1);
    const fields = {
      group: pick(groups),
      topic: topics[topicIndex] as string,
      partition: int(0, 63),
      offset: int(0, 5_000_000_000),
      leaderEpoch: int(0, 40),
      // Most clients commit no metadata; some write a short JSON checkpoint.
      metadata: random() < 0.9 ? '' : `{"host":"${word(int(8, 20))}","ts":${now}}`,
      commitTimestampMs: now + int(0, 86_400_000),
      valueVersion,
      ...(valueVersion === 4 && random() < 0.5 ? { topicId: topicIds[topicIndex] } : {}),
    };
    return { key: encodeOffsetCommitKey(fields), value: encodeOffsetCommitValue(fields) };
  };
  const tombstone = (): RawRecord =>
    random() < 0.8
      ? {
          key: encodeOffsetCommitKey({ group: pick(groups), topic: pick(topics), partition: int(0, 63) }),
          value: null,
        }
      : { key: encodeGroupMetadataKey(pick(groups), random() < 0.5 ? 2 : 3), value: null };
  const groupMetadata = (): RawRecord => {
    // The decoder reads only the key of a classic group's metadata; the value has the shape of a
    // version 3 GroupMetadataValue with a few members so that its size is realistic.
    const members = int(1, 6);
    const value = new KafkaWriter()
      .int16(3)
      .nullableString('consumer')
      .int32(int(1, 500))
      .nullableString('cooperative-sticky')
      .nullableString(`consumer-${word(36)}`)
      .int64(now)
      .int32(members);
    for (let i = 0; i < members; i++) {
      value
        .nullableString(`consumer-${word(36)}`)
        .nullableString(null)
        .nullableString(`client-${word(10)}`)
        .nullableString(`/10.0.${int(0, 255)}.${int(0, 255)}`)
        .int32(45_000)
        .int32(300_000)
        .int32(40)
        .raw(Buffer.alloc(40, i))
        .int32(60)
        .raw(Buffer.alloc(60, i));
    }
    return { key: encodeGroupMetadataKey(pick(groups)), value: value.build() };
  };
  const coordinatorRecord = (): RawRecord => {
    // KIP-848 records: group metadata (3) keys hold the group only; the others a member id as well.
    const recordType = int(3, 8);
    const key = new KafkaWriter().int16(recordType).nullableString(pick(groups));
    if (recordType === 5 || recordType === 7 || recordType === 8) key.nullableString(word(22));
    const value = new KafkaWriter()
      .int16(0)
      .raw(Buffer.alloc(int(5, 120), recordType))
      .build();
    return { key: key.build(), value };
  };

  const categories = Object.keys(MIX) as Category[];
  const counts = Object.fromEntries(categories.map((c) => [c, 0])) as Record<Category, number>;
  const records: RawRecord[] = [];
  for (let i = 0; i < size; i++) {
    let roll = random();
    let category: Category = 'offset_commit_v3';
    for (const candidate of categories) {
      if (roll < MIX[candidate]) {
        category = candidate;
        break;
      }
      roll -= MIX[candidate];
    }
    counts[category] += 1;
    if (category === 'offset_commit_v3') records.push(offsetCommit(3));
    else if (category === 'offset_commit_v4') records.push(offsetCommit(4));
    else if (category === 'tombstone') records.push(tombstone());
    else if (category === 'group_metadata') records.push(groupMetadata());
    else records.push(coordinatorRecord());
  }
  return { records, counts };
}

/** Decodes the whole pool once; returns a value that depends on every result, so no work is skipped. */
function decodePool(records: readonly RawRecord[]): number {
  let checksum = 0;
  for (const { key, value } of records) {
    const record = decodeOffsetsTopicRecord(key, value);
    checksum += record.kind === 'offset-commit' ? record.partition + 1 : record.kind.length;
  }
  return checksum;
}

function main(): void {
  const { records, counts } = buildPool(POOL_SIZE);
  const mix = Object.fromEntries(
    Object.entries(counts).map(([category, count]) => [category, Number((count / POOL_SIZE).toFixed(4))]),
  );
  console.log(`decoder: pool of ${POOL_SIZE} records, mix ${JSON.stringify(mix)}`);

  let checksum = 0;
  const warmupEnd = performance.now() + WARMUP_SECONDS * 1000;
  while (performance.now() < warmupEnd) checksum += decodePool(records);
  console.log(`decoder: warmed up for ${WARMUP_SECONDS} s, measuring for ${SECONDS} s`);

  const start = performance.now();
  const end = start + SECONDS * 1000;
  let decoded = 0;
  let nextReport = start + 1000;
  for (;;) {
    checksum += decodePool(records);
    decoded += records.length;
    const now = performance.now();
    if (now >= nextReport || now >= end) {
      const elapsed = (now - start) / 1000;
      console.log(
        `decoder: ${elapsed.toFixed(1)} s ${decoded} records ${Math.round(decoded / elapsed)} records/s`,
      );
      nextReport += 1000;
    }
    if (now >= end) break;
  }
  const seconds = (performance.now() - start) / 1000;
  const recordsPerSec = Math.round(decoded / seconds);
  if (checksum === 0) throw new Error('decoded nothing');
  if (recordsPerSec < TARGET_RECORDS_PER_SEC) {
    console.log(`decoder: below the target of ${TARGET_RECORDS_PER_SEC} records/s`);
    process.exitCode = 1;
  }
  console.log(
    JSON.stringify({
      bench: 'decoder',
      records_per_sec: recordsPerSec,
      records: decoded,
      seconds: Number(seconds.toFixed(3)),
      mix,
      node: process.version,
    }),
  );
}

main();
