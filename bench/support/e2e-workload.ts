// The commits of the end-to-end benchmark: many consumer groups that each consume every partition of
// one topic and commit all of their partitions at once, always moving forward and never past the last
// record, so that every commit points at a record that exists on both clusters.
import type { CommitEntry } from '@offsetsync/kafka';
import { seededRandom } from './commit-workload.js';

export interface E2eWorkloadOptions {
  /** Group ids are this prefix plus a zero-padded index. */
  groupPrefix: string;
  groups: number;
  topic: string;
  partitions: number;
  /** Records in each partition; committed offsets stay within 1 .. this - 1. */
  recordsPerPartition: number;
  /** The most commits any group partition gets over the run, warm-up included. */
  maxCommitsPerGroupPartition: number;
  seed: number;
}

/** Largest step a committed offset moves by; smaller when the run is long. */
const MAX_STEP = 20;

export class E2eWorkload {
  readonly groups: readonly string[];
  private readonly random: () => number;
  private readonly offsets: Int32Array;
  private readonly maxStep: number;
  private readonly lastOffset: number;

  constructor(private readonly options: E2eWorkloadOptions) {
    const { groups, partitions, recordsPerPartition, maxCommitsPerGroupPartition } = options;
    this.random = seededRandom(options.seed);
    const width = String(groups - 1).length;
    this.groups = Array.from(
      { length: groups },
      (_, i) => `${options.groupPrefix}${String(i).padStart(width, '0')}`,
    );
    this.lastOffset = recordsPerPartition - 1;
    // Start in the first tenth of the log and leave the rest for the steps of the whole run.
    const maxStart = Math.max(1, Math.floor(recordsPerPartition / 10));
    const room = this.lastOffset - maxStart;
    if (maxCommitsPerGroupPartition > room)
      throw new Error(
        `${maxCommitsPerGroupPartition} commits per group partition do not fit in ${recordsPerPartition} ` +
          'records without moving backwards: shorten the run or lower the rate',
      );
    this.maxStep = Math.max(1, Math.min(MAX_STEP, Math.floor(room / maxCommitsPerGroupPartition)));
    this.offsets = new Int32Array(groups * partitions);
    for (let i = 0; i < this.offsets.length; i++) this.offsets[i] = Math.floor(this.random() * maxStart);
  }

  /** Number of group partitions. */
  get size(): number {
    return this.options.groups * this.options.partitions;
  }

  /** The next commit of group `group`: every partition moves forward by 1 to the step limit. */
  next(group: number): CommitEntry[] {
    const { partitions, topic } = this.options;
    const entries: CommitEntry[] = [];
    for (let p = 0; p < partitions; p++) {
      const index = group * partitions + p;
      const offset = (this.offsets[index] as number) + 1 + Math.floor(this.random() * this.maxStep);
      if (offset > this.lastOffset)
        throw new Error(`group partition ${index} ran out of records (offset ${offset}); shorten the run`);
      this.offsets[index] = offset;
      entries.push({ topic, partition: p, offset, metadata: null });
    }
    return entries;
  }
}
