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
  IsolationLevel,
  KafkaRequestEvent,
  OffsetAnswer,
  PartitionBounds,
  TopicIdentity,
  TopicPartition,
} from './types.js';
export { toOffsetSyncError } from './kafka-errors.js';
export { recordFingerprint } from './record-fingerprint.js';
export { identityClasses, previousIdentical } from './identical-records.js';
export { kafkaAclsCommand, requiredKafkaAcls, type KafkaRole, type RequiredAcl } from './required-acls.js';
