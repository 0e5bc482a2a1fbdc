// Which records of a Fetch response a consumer sees. Pure: it works on what kafkajs' decoders return, and
// knows the parts of the record-batch format that decide visibility (batch boundaries, control batches and
// their ABORT/COMMIT markers, transactional producers, timestamp types).
import type { FetchedRecord, HeaderValue, IsolationLevel } from '../types.js';
import type { DecodedRecord } from './responses.js';

const CONTROL_TYPE_ABORT = 0;

/**
 * Turns the records of one partition's fetch response into what a consumer would see: records before
 * `requestedOffset` (a fetch returns whole batches) and control records are dropped; under read_committed
 * so are the batches of aborted transactions. The standard algorithm (as in the Java consumer): the
 * response lists aborted transactions as (producer id, first offset); a transactional batch of a producer
 * whose aborted transaction started at or before the batch's last offset is aborted, until that
 * producer's ABORT marker.
 */
export function selectRecords(
  messages: readonly DecodedRecord[],
  options: {
    requestedOffset: number;
    isolation: IsolationLevel;
    abortedTransactions: readonly { producerId: string; firstOffset: string }[];
  },
): { records: FetchedRecord[]; nextOffset: number } {
  const readCommitted = options.isolation === 'read_committed';
  const aborted = options.abortedTransactions
    .map((a) => ({ producerId: a.producerId, firstOffset: Number(a.firstOffset) }))
    .sort((a, b) => a.firstOffset - b.firstOffset);
  let nextAborted = 0;
  const abortedProducers = new Set<string>();
  const records: FetchedRecord[] = [];
  let nextOffset = options.requestedOffset;

  for (const batch of batchesOf(messages)) {
    const first = batch[0];
    const last = batch[batch.length - 1];
    if (first === undefined || last === undefined) continue;
    const context = first.batchContext;
    const lastOffset =
      context === undefined ? Number(last.offset) : Number(context.firstOffset) + context.lastOffsetDelta;
    nextOffset = Math.max(nextOffset, lastOffset + 1);

    if (readCommitted && context !== undefined && context.producerId !== '-1') {
      while (nextAborted < aborted.length && (aborted[nextAborted]?.firstOffset ?? Infinity) <= lastOffset) {
        abortedProducers.add(aborted[nextAborted]?.producerId ?? '');
        nextAborted += 1;
      }
      if (context.isControlBatch) {
        if (isAbortMarker(first)) abortedProducers.delete(context.producerId);
        continue;
      }
      if (context.inTransaction && abortedProducers.has(context.producerId)) continue;
    }
    if (context?.isControlBatch === true) continue;

    for (const message of batch) {
      const offset = Number(message.offset);
      if (offset < options.requestedOffset || message.isControlRecord === true) continue;
      records.push(toFetchedRecord(message, offset));
    }
  }
  return { records, nextOffset };
}

/** Consecutive records of the same batch (kafkajs flattens batches but keeps each one's context). */
function* batchesOf(messages: readonly DecodedRecord[]): Generator<DecodedRecord[]> {
  let current: DecodedRecord[] = [];
  for (const message of messages) {
    const previous = current[current.length - 1];
    const sameBatch =
      previous !== undefined &&
      message.batchContext !== undefined &&
      previous.batchContext?.firstOffset === message.batchContext.firstOffset;
    if (!sameBatch && current.length > 0) {
      yield current;
      current = [];
    }
    current.push(message);
  }
  if (current.length > 0) yield current;
}

/** A control record's key is int16 version + int16 type (0 = ABORT, 1 = COMMIT). */
function isAbortMarker(record: DecodedRecord): boolean {
  const key = record.key;
  return key !== null && key.length >= 4 && key.readInt16BE(2) === CONTROL_TYPE_ABORT;
}

const LOG_APPEND_TIME = 1;
const LEGACY_LOG_APPEND_TIME_FLAG = 0x08;

function toFetchedRecord(message: DecodedRecord, offset: number): FetchedRecord {
  const logAppendTime =
    message.batchContext === undefined
      ? ((message.attributes ?? 0) & LEGACY_LOG_APPEND_TIME_FLAG) !== 0
      : message.batchContext.timestampType === LOG_APPEND_TIME;
  const headers: Record<string, HeaderValue | HeaderValue[]> = {};
  for (const [key, value] of Object.entries(message.headers ?? {})) headers[key] = value;
  return {
    offset,
    timestampMs: Number(message.timestamp),
    timestampType: logAppendTime ? 'log-append-time' : 'create-time',
    key: message.key,
    value: message.value,
    headers,
  };
}
