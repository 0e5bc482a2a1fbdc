// The public surface of @offsetsync/jetstream. Explicit named exports only: what is not listed here is
// internal to the package.

export { connectNats } from './connection.js';
export {
  provisionDurableConsumer,
  provisionKvBucket,
  provisionStreams,
  streamSpecs,
} from './provisioning.js';
export { BatchConsumer } from './batch-consumer.js';
export { publishAll, type StreamMessage } from './publish-all.js';
export {
  LastOnSubject,
  publishNewest,
  type NewestOutcome,
  type RankedMessage,
  type SubjectOrder,
} from './publish-newest.js';
export {
  JetStreamApiError,
  JetStreamPublisher,
  WRONG_LAST_SEQUENCE,
  type StoredMessage,
} from './jetstream-publisher.js';
export { KvCasStore } from './kv-cas-store.js';
