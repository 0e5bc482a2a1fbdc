// Errors built from the error codes brokers answer with: kafkajs names and classifies each code (type,
// retriable), toOffsetSyncError turns that into an OffsetSyncError; a topic or partition the cluster does
// not have gets a code of its own.
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';
import { BrokerErrorCodes, toOffsetSyncError } from '../kafka-errors.js';
import type { TopicPartition } from '../types.js';
import { kafkajsInternals } from './kafkajs-internals.js';

/** Names of the codes kafkajs 2.2.4 does not know (it knows codes up to 88) that the adapter may meet. */
const NEWER_CODE_NAMES: ReadonlyMap<number, string> = new Map(
  Object.entries(BrokerErrorCodes)
    .filter(([, code]) => code > 88)
    .map(([name, code]) => [code, name]),
);

/**
 * The error for a broker's error `code` (`KAFKA_BROKER_ERROR`, retryable as kafkajs classifies the code).
 * A code kafkajs does not know keeps its number in `details.brokerCode` (kafkajs would say -99) and is not
 * retryable.
 */
export function brokerError(
  code: number,
  operation: string,
  details: Record<string, unknown>,
): OffsetSyncError {
  const known = kafkajsInternals().createErrorFromCode(code) as Error & { type?: unknown };
  if (known.type !== 'KAFKAJS_UNKNOWN_ERROR_CODE') return toOffsetSyncError(known, { operation, details });
  const name = NEWER_CODE_NAMES.get(code) ?? `UNKNOWN_ERROR_CODE_${code}`;
  return new OffsetSyncError(`${operation} failed: broker error ${name} (${code})`, {
    code: ErrorCodes.KAFKA_BROKER_ERROR,
    retryable: false,
    details: { ...details, brokerError: name, brokerCode: code },
  });
}

/**
 * The error for a topic or a partition that does not exist on the cluster (`TOPIC_MISSING` or
 * `PARTITION_MISSING`, not retryable), with the broker's UNKNOWN_TOPIC_OR_PARTITION in its details.
 */
export function missingError(
  item: TopicPartition,
  code: typeof ErrorCodes.TOPIC_MISSING | typeof ErrorCodes.PARTITION_MISSING,
): OffsetSyncError {
  const what =
    code === ErrorCodes.TOPIC_MISSING ? `topic ${item.topic}` : `partition ${item.topic}-${item.partition}`;
  return new OffsetSyncError(`${what} does not exist on the cluster`, {
    code,
    retryable: false,
    details: {
      brokerError: 'UNKNOWN_TOPIC_OR_PARTITION',
      brokerCode: BrokerErrorCodes.UNKNOWN_TOPIC_OR_PARTITION,
      topic: item.topic,
      partition: item.partition,
    },
  });
}
