// The sandbox's demo data: records whose timestamps collide (runs of records share one timestamp, as
// they do when a producer batches faster than its clock ticks), so a translation by timestamp alone
// would land on the wrong record of a run. Every value is a unique id: that is the record identity the
// move is judged by.

/** How many consecutive records of a partition share one timestamp. */
export const RECORDS_PER_TIMESTAMP = 10;

/** One demo record, with the partition it is written to. */
export interface DemoRecord {
  partition: number;
  key: string;
  /** Unique over the whole topic: `demo:<partition>:<index>`. */
  value: string;
  timestampMs: number;
}

/** The id of the `index`-th record of `partition`; it is also the record's value. */
export function demoRecordId(partition: number, index: number): string {
  return `demo:${partition}:${index}`;
}

/**
 * `perPartition` records for each of `partitions` partitions, in write order per partition. Timestamps
 * start at `baseMs` and advance by one millisecond every {@link RECORDS_PER_TIMESTAMP} records.
 */
export function demoRecords(partitions: number, perPartition: number, baseMs: number): DemoRecord[][] {
  return Array.from({ length: partitions }, (_, partition) =>
    Array.from({ length: perPartition }, (_, index) => ({
      partition,
      key: `customer-${index % 13}`,
      value: demoRecordId(partition, index),
      timestampMs: baseMs + Math.floor(index / RECORDS_PER_TIMESTAMP),
    })),
  );
}

/**
 * Where the demo consumer stops on each partition (the offset it commits): a bit past half the
 * partition and never on a timestamp boundary, so the committed position sits inside a run of records
 * that share a timestamp. Assumes the topic holds only the demo records (offset = index).
 */
export function demoStopOffsets(partitions: number, perPartition: number): number[] {
  if (perPartition < 2 * RECORDS_PER_TIMESTAMP) {
    throw new RangeError(`at least ${2 * RECORDS_PER_TIMESTAMP} records per partition are needed`);
  }
  return Array.from({ length: partitions }, (_, p) => {
    const base = Math.floor((perPartition * (55 + 5 * (p % 4))) / 100);
    const inRun = 3 + ((p * 2) % (RECORDS_PER_TIMESTAMP - 4));
    return base - (base % RECORDS_PER_TIMESTAMP) + inRun;
  });
}
