// The public surface of @offsetsync/kafka. Explicit named exports only: what is not listed here is
// internal to the package.

export { KafkaReader, KafkaWriter } from './binary.js';
export { KafkaAdapter } from './kafka-adapter.js';
export type {
  CommitAnswer,
  CommitEntry,
  CommittedOffset,
  FetchAnswer,
  FetchedRecord,
  FetchRequest,
  GroupDescription,
  HeaderValue,
  IsolationLevel,
  KafkaAdapterOptions,
  KafkaRequestEvent,
  OffsetAnswer,
  OffsetQuery,
  PartitionBounds,
  TopicPartition,
} from './types.js';
export { BrokerErrorCodes, toOffsetSyncError, type KafkaErrorContext } from './kafka-errors.js';
export { registerCompressionCodecs } from './compression-codecs.js';
export { recordFingerprint } from './record-fingerprint.js';
