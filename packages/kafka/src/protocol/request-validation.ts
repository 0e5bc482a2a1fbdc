// Questions that cannot be encoded (an empty topic, a negative partition or offset) are answered with an
// error before anything is sent. Pure.
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import type { FetchRequest, OffsetQuery, TopicPartition } from '../types.js';

/**
 * Why `item` cannot be sent (`KAFKA_PROTOCOL`, not retryable), or undefined when it can. Checks the fields
 * every call has (topic, partition) and those of list-offsets and fetch questions that are present.
 */
export function invalidItem(operation: string, item: TopicPartition): OffsetSyncError | undefined {
  if (typeof item.topic !== 'string' || item.topic === '') return invalidRequest(operation, 'empty topic');
  if (!Number.isSafeInteger(item.partition) || item.partition < 0) {
    return invalidRequest(operation, `partition ${item.partition}`);
  }
  const query = item as Partial<OffsetQuery> & Partial<FetchRequest>;
  if (typeof query.timestamp === 'number' && !isOffset(query.timestamp)) {
    return invalidRequest(operation, `timestamp ${query.timestamp}`);
  }
  if (query.offset !== undefined && !isOffset(query.offset))
    return invalidRequest(operation, `offset ${query.offset}`);
  if (query.maxBytes !== undefined && !(Number.isSafeInteger(query.maxBytes) && query.maxBytes > 0)) {
    return invalidRequest(operation, `maxBytes ${query.maxBytes}`);
  }
  return undefined;
}

function invalidRequest(operation: string, what: string): OffsetSyncError {
  return new OffsetSyncError(`${operation}: invalid ${what}`, {
    code: ErrorCodes.KAFKA_PROTOCOL,
    retryable: false,
  });
}

function isOffset(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 0;
}
