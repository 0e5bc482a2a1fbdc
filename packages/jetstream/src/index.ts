// The public surface of @offsetsync/jetstream. Explicit named exports only: what is not listed here is
// internal to the package.

export { connectNats, type NatsConnectionSettings } from './connection.js';
export {
  provisionDurableConsumer,
  provisionKvBucket,
  provisionStreams,
  streamSpecs,
  type DurableConsumerSpec,
  type ProvisionAction,
  type StreamSpec,
} from './provisioning.js';
export { BatchConsumer, type BatchConsumerOptions } from './batch-consumer.js';
export { publishAll, type StreamMessage } from './publish-all.js';
export {
  JetStreamApiError,
  JetStreamPublisher,
  WRONG_LAST_SEQUENCE,
  type JetStreamPublishOptions,
  type PublishAck,
  type StoredMessage,
} from './jetstream-publisher.js';
export { KvCasStore, type KvCasEntry, type KvCasPublisher } from './kv-cas-store.js';
