// The public surface of @offsetsync/jetstream. Explicit named exports only: what is not listed here is
// internal to the package.

export { connectNats, isAuthenticationError } from './connection.js';
export { redactUrlCredentials } from './redact-url.js';
export {
  inboxPrefix,
  natsPermissions,
  STREAMS_OF_ROLE,
  type NatsRole,
  type NatsRoleScope,
} from './permissions.js';
export {
  committerConsumerSpec,
  committerDurable,
  type CommitterMode,
  translatorConsumerSpec,
  translatorDurable,
} from './durable-consumers.js';
export {
  provisionDurableConsumer,
  provisionKvBucket,
  provisionStreams,
  verifyDurableConsumer,
  verifyKvBucket,
  verifyStreams,
  type ProvisionAction,
  type ProvisioningMode,
  streamSpecs,
} from './provisioning.js';
export { BatchConsumer, deadLetterProblem } from './batch-consumer.js';
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
