// The public surface of @offsetsync/kafka. Explicit named exports only: what is not listed here is
// internal to the package.

export { KafkaReader, KafkaWriter } from './binary.js';
export {
  KafkaAdapter,
  type CommitAnswer,
  type CommitEntry,
  type CommittedOffset,
  type FetchAnswer,
  type FetchedRecord,
  type FetchRequest,
  type GroupDescription,
  type HeaderValue,
  type IsolationLevel,
  type KafkaAdapterOptions,
  type KafkaRequestEvent,
  type OffsetAnswer,
  type OffsetQuery,
  type PartitionBounds,
  type TopicPartition,
} from './kafka-adapter.js';
export { BrokerErrorCodes, toOffsetSyncError, type KafkaErrorContext } from './kafka-errors.js';
export { registerCompressionCodecs } from './compression-codecs.js';
export { recordFingerprint } from './record-fingerprint.js';
