// The reads behind the target proof (target-proof.ts decides): the group's committed offsets on the
// target, and the data records around the committed offset on both clusters, read the way the collector
// reads its anchors (committed records only, control records and compaction gaps stepped over, key and
// value fingerprinted with recordFingerprint). Batched: one Fetch per broker per round for all partitions.
import {
  type CommittedOffset,
  type FetchedRecord,
  type KafkaAdapter,
  type PartitionBounds,
  recordFingerprint,
  type TopicPartition,
} from '@offsetsync/kafka';
import {
  type PartitionProof,
  type ProofRecord,
  proveOnTarget,
  type SourceReading,
  type TargetReading,
} from './target-proof.js';

/** What the proof reads from a cluster. */
type ProofCluster = Pick<KafkaAdapter, 'partitionBounds' | 'fetchRecords'>;

/** Bytes asked per partition and read: a window of 500 small records fits in one or two reads. */
const READ_BYTES = 256 * 1024;
/** Rounds of reads before a range read gives up (every round makes progress or ends the read). */
const MAX_ROUNDS = 200;
/** A look-back before an offset grows by this factor while it finds fewer records than wanted. */
const LOOKBACK_GROWTH = 4;
const LOOKBACK_STEPS = 3;

interface RangeRead extends TopicPartition {
  from: number;
  /** Records at or after this offset are not wanted. */
  until: number;
  limit: number;
}

const tpKey = (tp: TopicPartition): string => `${tp.partition}\u0000${tp.topic}`;

function toProofRecord(record: FetchedRecord): ProofRecord {
  return {
    offset: record.offset,
    timestampMs: record.timestampMs,
    fingerprint: recordFingerprint(record.key, record.value),
  };
}

/** Up to `limit` committed data records in [from, until) of each partition, in offset order. */
async function readForward(
  cluster: ProofCluster,
  reads: readonly RangeRead[],
): Promise<Array<ProofRecord[] | Error>> {
  const results: Array<ProofRecord[] | Error> = reads.map(() => []);
  let pending = reads
    .map((read, index) => ({ index, cursor: read.from }))
    .filter(({ index, cursor }) => cursor < reads[index]!.until);
  for (let round = 0; pending.length > 0; round++) {
    if (round >= MAX_ROUNDS) {
      for (const { index, cursor } of pending) {
        results[index] = new Error(`reading made no progress at offset ${cursor} after ${MAX_ROUNDS} reads`);
      }
      break;
    }
    const answers = await cluster.fetchRecords(
      pending.map(({ index, cursor }) => ({
        topic: reads[index]!.topic,
        partition: reads[index]!.partition,
        offset: cursor,
        maxBytes: READ_BYTES,
      })),
    );
    const again: typeof pending = [];
    pending.forEach(({ index, cursor }, i) => {
      const read = reads[index]!;
      const answer = answers[i];
      const got = results[index];
      if (answer === undefined || !Array.isArray(got)) return;
      if (answer.error) {
        results[index] = answer.error;
        return;
      }
      for (const record of answer.records) {
        if (record.offset < cursor) continue;
        if (record.offset >= read.until || got.length >= read.limit) break;
        got.push(toProofRecord(record));
      }
      // What a read-committed consumer can see now ends at the last stable offset.
      const visibleEnd = answer.lastStableOffset >= 0 ? answer.lastStableOffset : answer.highWatermark;
      const end = Math.min(read.until, visibleEnd);
      if (got.length >= read.limit || answer.nextOffset >= end) return;
      // No whole batch came back although records remain: ask again (bounded by MAX_ROUNDS).
      again.push({ index, cursor: Math.max(cursor, answer.nextOffset) });
    });
    pending = again;
  }
  return results;
}

/**
 * The last `limit` committed data records before `before` of each partition, in offset order: a look-back
 * of `limit` offsets, grown while control records or compaction gaps leave fewer records than wanted.
 */
async function readBackward(
  cluster: ProofCluster,
  reads: ReadonlyArray<TopicPartition & { before: number; logStartOffset: number; limit: number }>,
): Promise<Array<ProofRecord[] | Error>> {
  const results: Array<ProofRecord[] | Error> = reads.map(() => []);
  let pending = reads.map((read, index) => ({ index, span: read.limit }));
  for (let step = 0; step <= LOOKBACK_STEPS && pending.length > 0; step++) {
    const ranges = pending.map(({ index, span }) => {
      const read = reads[index]!;
      const from = Math.max(read.logStartOffset, read.before - span);
      return { topic: read.topic, partition: read.partition, from, until: read.before, limit: span };
    });
    const answers = await readForward(cluster, ranges);
    const again: typeof pending = [];
    pending.forEach(({ index, span }, i) => {
      const answer = answers[i]!;
      const read = reads[index]!;
      if (!Array.isArray(answer)) {
        results[index] = answer;
        return;
      }
      results[index] = answer.slice(-read.limit);
      const reachedLogStart = ranges[i]!.from <= read.logStartOffset;
      if (answer.length < read.limit && !reachedLogStart) {
        again.push({ index, span: span * LOOKBACK_GROWTH });
      }
    });
    pending = again;
  }
  return results;
}

/** The records around one offset of each partition: up to `window` before it and `window` from it. */
async function readAround(
  cluster: ProofCluster,
  at: ReadonlyArray<TopicPartition & { offset: number; bounds: PartitionBounds }>,
  window: number,
): Promise<Array<{ before: ProofRecord[]; from: ProofRecord[] } | Error>> {
  const [before, from] = await Promise.all([
    readBackward(
      cluster,
      at.map((a) => ({
        topic: a.topic,
        partition: a.partition,
        before: a.offset,
        logStartOffset: a.bounds.logStartOffset,
        limit: window,
      })),
    ),
    readForward(
      cluster,
      at.map((a) => ({
        topic: a.topic,
        partition: a.partition,
        from: a.offset,
        until: Number.MAX_SAFE_INTEGER,
        limit: window,
      })),
    ),
  ]);
  return at.map((_, i) => {
    const b = before[i]!;
    const f = from[i]!;
    if (!Array.isArray(b)) return b;
    if (!Array.isArray(f)) return f;
    return { before: b, from: f };
  });
}

function unreadable(
  committed: CommittedOffset,
  targetOffset: number | undefined,
  failure: 'UNREADABLE' | 'SOURCE_UNREADABLE',
  why: string,
): PartitionProof {
  const partition = `${committed.topic}-${committed.partition}`;
  return {
    partition,
    sourceOffset: committed.offset,
    targetOffset: targetOffset ?? null,
    nextRecord: 'not-checked',
    examined: 0,
    consumedCopies: 0,
    identicalAcrossCommit: 0,
    proven: false,
    failure,
    message: `${partition}: ${why}`,
  };
}

export interface ProofReadInput {
  group: string;
  /** The group's committed offsets on the source (non-negative), one per partition to prove. */
  committed: readonly CommittedOffset[];
  source: ProofCluster;
  target: ProofCluster & Pick<KafkaAdapter, 'fetchCommittedOffsets'>;
  /** Records read on each side of both offsets; see PROOF_WINDOW_DEFAULT. */
  window: number;
  /** Cluster aliases, for the messages. */
  from: string;
  to: string;
  /** The name on the target of a source topic (the link's topic names). Default: the same name. */
  targetTopic?: (sourceTopic: string) => string;
}

/**
 * Reads what the proof needs and proves every partition, in the order of `committed`. The target is read
 * before the source: every copy seen on the target then has its original among the source records read.
 * Rejects only when the target's committed offsets cannot be fetched at all.
 */
export async function readAndProve(input: ProofReadInput): Promise<PartitionProof[]> {
  const { committed, window } = input;
  const onTarget = input.targetTopic ?? ((topic: string) => topic);
  /** Each partition as the target names it; the target is only ever asked about these. */
  const atTarget = committed.map((c) => ({ ...c, topic: onTarget(c.topic) }));
  const topics = [...new Set(atTarget.map((c) => c.topic))];
  const targetCommitted = await input.target.fetchCommittedOffsets(input.group, topics);
  const targetOffset = new Map(targetCommitted.filter((o) => o.offset >= 0).map((o) => [tpKey(o), o.offset]));
  const tOf = (c: CommittedOffset) =>
    targetOffset.get(tpKey({ topic: onTarget(c.topic), partition: c.partition }));

  const targetBounds = await input.target.partitionBounds(atTarget);
  const proofs: Array<PartitionProof | undefined> = committed.map(() => undefined);
  const targetReadable: Array<{ index: number; bounds: PartitionBounds; offset: number }> = [];
  const targetStates: Array<TargetReading | undefined> = committed.map(() => undefined);
  committed.forEach((c, index) => {
    const bounds = targetBounds[index];
    if (bounds === undefined || !('highWatermark' in bounds)) {
      proofs[index] = unreadable(
        c,
        tOf(c),
        'UNREADABLE',
        `cannot read the partition on ${input.to}: ${bounds === undefined ? 'no answer' : bounds.message}`,
      );
      return;
    }
    const t = tOf(c);
    targetStates[index] = {
      committed: t,
      logStartOffset: bounds.logStartOffset,
      logEndOffset: bounds.highWatermark,
      before: [],
      from: [],
    };
    if (t !== undefined && t >= bounds.logStartOffset && t <= bounds.highWatermark) {
      targetReadable.push({ index, bounds, offset: t });
    }
  });

  const targetRecords = await readAround(
    input.target,
    targetReadable.map((r) => ({ ...atTarget[r.index]!, offset: r.offset, bounds: r.bounds })),
    window,
  );
  targetReadable.forEach((r, i) => {
    const answer = targetRecords[i]!;
    if (answer instanceof Error) {
      const c = committed[r.index]!;
      proofs[r.index] = unreadable(
        c,
        r.offset,
        'UNREADABLE',
        `cannot read records on ${input.to}: ${answer.message}`,
      );
      return;
    }
    targetStates[r.index] = { ...targetStates[r.index]!, ...answer };
  });

  // A target offset outside the target's log is refused before any record matters.
  const emptySource = (c: CommittedOffset): SourceReading => ({
    committed: c.offset,
    logStartOffset: -1,
    logEndOffset: -1,
    consumed: [],
    unconsumed: [],
  });
  const readTarget = new Set(targetReadable.map((r) => r.index));
  committed.forEach((c, index) => {
    if (proofs[index] === undefined && !readTarget.has(index)) {
      proofs[index] = proveOnTarget({ ...c, source: emptySource(c), target: targetStates[index]! });
    }
  });

  const toRead = committed
    .map((c, index) => ({ c, index }))
    .filter(({ index }) => proofs[index] === undefined);
  const sourceBounds = await input.source.partitionBounds(toRead.map(({ c }) => c));
  const sourceReadable: Array<{ index: number; bounds: PartitionBounds }> = [];
  toRead.forEach(({ c, index }, i) => {
    const bounds = sourceBounds[i];
    if (bounds === undefined || !('highWatermark' in bounds)) {
      proofs[index] = unreadable(
        c,
        tOf(c),
        'SOURCE_UNREADABLE',
        `cannot read the partition on ${input.from}: ${bounds === undefined ? 'no answer' : bounds.message}`,
      );
      return;
    }
    sourceReadable.push({ index, bounds });
  });
  const sourceRecords = await readAround(
    input.source,
    sourceReadable.map((r) => ({ ...committed[r.index]!, bounds: r.bounds })),
    window,
  );
  sourceReadable.forEach((r, i) => {
    const answer = sourceRecords[i]!;
    const c = committed[r.index]!;
    if (answer instanceof Error) {
      proofs[r.index] = unreadable(
        c,
        tOf(c),
        'SOURCE_UNREADABLE',
        `cannot read records on ${input.from}: ${answer.message}`,
      );
      return;
    }
    const source: SourceReading = {
      committed: c.offset,
      logStartOffset: r.bounds.logStartOffset,
      logEndOffset: r.bounds.highWatermark,
      consumed: answer.before,
      unconsumed: answer.from,
    };
    proofs[r.index] = proveOnTarget({
      topic: c.topic,
      partition: c.partition,
      source,
      target: targetStates[r.index]!,
    });
  });
  return proofs.map((p, i) => p ?? unreadable(committed[i]!, tOf(committed[i]!), 'UNREADABLE', 'not read'));
}
