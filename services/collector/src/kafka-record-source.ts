// The anchor resolver's view of the source cluster, backed by the Kafka adapter: bounds from one
// ListOffsets pair per broker, records from one Fetch per broker per round.
import { type OffsetSyncError } from '@offsetsync/contracts';
import {
  recordFingerprint,
  type FetchedRecord,
  type KafkaAdapter,
  type PartitionBounds,
  type TopicPartition,
} from '@offsetsync/kafka';
import type { AnchorRecordSource, SourceRecord } from './anchor-resolver.js';

/** Fetches that came back with only control or aborted records are continued this many times. */
const MAX_CONTINUATIONS = 32;

/**
 * Bytes asked per partition and read. An anchor needs one or two records near an offset; the broker still
 * returns a whole first batch when it is larger. Asking for the default megabyte made every cold lookup
 * read (and decode) the rest of the partition.
 */
const READ_BYTES = 32 * 1024;

export class KafkaRecordSource implements AnchorRecordSource {
  constructor(private readonly adapter: Pick<KafkaAdapter, 'partitionBounds' | 'fetchRecords'>) {}

  bounds(partitions: readonly TopicPartition[]): Promise<Array<PartitionBounds | OffsetSyncError>> {
    return this.adapter.partitionBounds(partitions);
  }

  async records(
    requests: ReadonlyArray<TopicPartition & { offset: number; until?: number }>,
  ): Promise<Array<SourceRecord[] | OffsetSyncError>> {
    const results = new Array<SourceRecord[] | OffsetSyncError>(requests.length);
    let pending = requests.map((request, index) => ({ index, request }));
    for (let attempt = 0; attempt <= MAX_CONTINUATIONS && pending.length > 0; attempt++) {
      const answers = await this.adapter.fetchRecords(
        pending.map(({ request }) => ({
          topic: request.topic,
          partition: request.partition,
          offset: request.offset,
          maxBytes: READ_BYTES,
        })),
      );
      const again: typeof pending = [];
      pending.forEach(({ index, request }, i) => {
        const answer = answers[i];
        if (answer === undefined) return;
        if (answer.error) {
          results[index] = answer.error;
          return;
        }
        // Only control records or an aborted transaction came back, and the log goes on: read past them,
        // or an empty answer would wrongly say that nothing follows.
        const stable = answer.lastStableOffset >= 0 ? answer.lastStableOffset : answer.highWatermark;
        if (answer.records.length === 0 && answer.nextOffset > request.offset && answer.nextOffset < stable) {
          again.push({ index, request: { ...request, offset: answer.nextOffset } });
          return;
        }
        results[index] = wanted(answer.records, request.until).map((record) => ({
          offset: record.offset,
          timestampMs: record.timestampMs,
          timestampType: record.timestampType,
          // Hashed only for the one or two records that become anchors, not for every record read.
          get fingerprint() {
            return recordFingerprint(record.key, record.value);
          },
          keySize: record.key === null ? -1 : record.key.length,
          valueSize: record.value === null ? -1 : record.value.length,
        }));
      });
      pending = again;
    }
    // Still nothing but markers after every continuation: report no records found from there.
    for (const { index } of pending) results[index] = [];
    return results;
  }
}

/**
 * The records up to and including the first at or after `until` (all of them without it): a read returns
 * whole batches, often hundreds of records, of which a search looks at one or two.
 */
function wanted(records: readonly FetchedRecord[], until: number | undefined): readonly FetchedRecord[] {
  if (until === undefined) return records;
  const end = records.findIndex((record) => record.offset >= until);
  return end < 0 ? records : records.slice(0, end + 1);
}
