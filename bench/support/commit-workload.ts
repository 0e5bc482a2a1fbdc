// The offset commits a benchmark writes into an offsets-format topic: many consumer groups that each
// consume every partition of one data topic and commit all of their partitions at once, as a Kafka
// consumer does. Remembers the last commit of every group partition, to check what the collector made
// of them.
import {
  encodeOffsetCommitKey,
  encodeOffsetCommitValue,
} from '../../services/collector/src/offsets-topic-encoder.js';

export interface CommitWorkloadOptions {
  /** Number of consumer groups. */
  groups: number;
  /** The topic the groups consume; every group commits each of its partitions. */
  dataTopic: string;
  dataPartitions: number;
  /** Records in each data partition: committed offsets stay within 1..this, so anchors find records. */
  recordsPerPartition: number;
  /** Partitions of the offsets topic; a group's records all go to one of them, as in Kafka. */
  offsetsPartitions: number;
  /** The busiest groups (this share of them) make `hotCommitShare` of all commits. */
  hotGroupShare: number;
  hotCommitShare: number;
  seed: number;
}

/** One record for the offsets topic. */
export interface OffsetsTopicRecord {
  partition: number;
  key: Buffer;
  value: Buffer;
}

/** The last commit written for one group partition. */
export interface LastCommit {
  group: string;
  topic: string;
  partition: number;
  offset: number;
  commitTimestampMs: number;
}

/** Largest step a committed offset moves by from one commit to the next. */
const MAX_STEP = 4;

/**
 * The offsets-topic partition Kafka's group coordinator uses for a group: Java's `String.hashCode` of
 * the group id, made non-negative as `Utils.abs` does, modulo the partition count.
 */
function offsetsPartitionFor(group: string, partitions: number): number {
  let hash = 0;
  for (let i = 0; i < group.length; i++) hash = (Math.imul(hash, 31) + group.charCodeAt(i)) | 0;
  const positive = hash === -2147483648 ? 0 : Math.abs(hash);
  return positive % partitions;
}

/** mulberry32: a small seeded generator, so every run writes the same sequence of commits. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class CommitWorkload {
  readonly groups: readonly string[];
  private readonly random: () => number;
  private readonly hotGroups: number;
  private readonly groupPartition: number[];
  /** Per group partition (group * dataPartitions + partition): key bytes, built once. */
  private readonly keys: Buffer[];
  private readonly offsets: Int32Array;
  private readonly timestamps: Float64Array;
  private readonly commitCounts: Uint32Array;

  constructor(private readonly options: CommitWorkloadOptions) {
    this.random = seededRandom(options.seed);
    const width = String(options.groups - 1).length;
    this.groups = Array.from(
      { length: options.groups },
      (_, i) => `bench-group-${String(i).padStart(width, '0')}`,
    );
    this.hotGroups = Math.max(1, Math.round(options.groups * options.hotGroupShare));
    this.groupPartition = this.groups.map((g) => offsetsPartitionFor(g, options.offsetsPartitions));
    const size = options.groups * options.dataPartitions;
    this.keys = new Array<Buffer>(size);
    this.offsets = new Int32Array(size);
    this.timestamps = new Float64Array(size);
    this.commitCounts = new Uint32Array(size);
    for (let g = 0; g < options.groups; g++) {
      for (let p = 0; p < options.dataPartitions; p++) {
        const index = g * options.dataPartitions + p;
        this.keys[index] = encodeOffsetCommitKey({
          group: this.groups[g] as string,
          topic: options.dataTopic,
          partition: p,
        });
        // Each group partition starts somewhere in the log, so commits spread over its records.
        this.offsets[index] = 1 + Math.floor(this.random() * options.recordsPerPartition);
      }
    }
  }

  /** Number of group partitions. */
  get size(): number {
    return this.options.groups * this.options.dataPartitions;
  }

  /** How many groups live on each offsets-topic partition. */
  groupsPerOffsetsPartition(): number[] {
    const counts = new Array<number>(this.options.offsetsPartitions).fill(0);
    for (const p of this.groupPartition) counts[p] = (counts[p] ?? 0) + 1;
    return counts;
  }

  /**
   * Whole-group commits (one record per data partition of the group) until at least `minRecords`
   * records are made. Each commit moves the group partition's offset forward by 1 to 4 records; past
   * the log end it starts again near the log start, so every offset points at a record that exists.
   */
  next(minRecords: number, nowMs: number): OffsetsTopicRecord[] {
    const { dataPartitions, recordsPerPartition } = this.options;
    const records: OffsetsTopicRecord[] = [];
    while (records.length < minRecords) {
      const group = this.pickGroup();
      const partition = this.groupPartition[group] as number;
      for (let p = 0; p < dataPartitions; p++) {
        const index = group * dataPartitions + p;
        let offset = (this.offsets[index] as number) + 1 + Math.floor(this.random() * MAX_STEP);
        if (offset > recordsPerPartition) offset -= recordsPerPartition;
        this.offsets[index] = offset;
        this.timestamps[index] = nowMs;
        this.commitCounts[index] = (this.commitCounts[index] as number) + 1;
        records.push({
          partition,
          key: this.keys[index] as Buffer,
          value: encodeOffsetCommitValue({
            group: this.groups[group] as string,
            topic: this.options.dataTopic,
            partition: p,
            offset,
            leaderEpoch: 0,
            metadata: '',
            commitTimestampMs: nowMs,
            valueVersion: 4,
          }),
        });
      }
    }
    return records;
  }

  /** The last commit written for group partition `index`, or undefined when it has none yet. */
  last(index: number): LastCommit | undefined {
    if (this.commitCounts[index] === 0) return undefined;
    const { dataPartitions } = this.options;
    return {
      group: this.groups[Math.floor(index / dataPartitions)] as string,
      topic: this.options.dataTopic,
      partition: index % dataPartitions,
      offset: this.offsets[index] as number,
      commitTimestampMs: this.timestamps[index] as number,
    };
  }

  /** Group partitions that got at least one commit. */
  committedGroupPartitions(): number {
    let count = 0;
    for (const n of this.commitCounts) if (n > 0) count += 1;
    return count;
  }

  private pickGroup(): number {
    if (this.random() < this.options.hotCommitShare) return Math.floor(this.random() * this.hotGroups);
    return Math.floor(this.random() * this.options.groups);
  }
}
