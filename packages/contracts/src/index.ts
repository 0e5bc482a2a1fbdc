// The public surface of @offsetsync/contracts. Explicit named exports only: what is not listed here is
// internal to the package.

export {
  ConfigError,
  ErrorCodes,
  errorCode,
  isOffsetSyncError,
  isRetryable,
  OffsetSyncError,
  type ConfigProblem,
  type ErrorCode,
} from './errors.js';
export {
  decodeEvent,
  encodeEvent,
  EVENT_TYPE_HEADER,
  type DecodeFailureReason,
  type DecodeOptions,
  type EventOf,
  type EventType,
  type OffsetSyncEvent,
  type ReceivedMessage,
} from './envelope.js';
export { readSecretFile } from './secret-file.js';
export { appliedMessageId, committedMessageId, translatedMessageId } from './message-ids.js';
export { compareVersions, formatVersion } from './version-order.js';
export { extractTraceContext, injectTraceContext } from './trace-context.js';
export {
  HealthCheckRequest,
  HealthCheckResponse,
  HealthCheckResponse_ServingStatus,
  HealthClient,
  HealthService,
  type HealthServer,
} from './gen/grpc/health/v1/health.js';
export {
  GetGroupRequest,
  GroupStatus,
  InstanceInfo,
  LinkState,
  linkStateToJSON,
  LinkStatus,
  ListGroupsRequest,
  ListGroupsResponse,
  ListLinksRequest,
  ListLinksResponse,
  OffsetSyncHealthClient,
  OffsetSyncHealthService,
  PartitionStatus,
  PartitionSyncState,
  WatchLinksRequest,
  type OffsetSyncHealthServer,
} from './gen/offsetsync/v1/health_service.js';
export { Names, type GroupPartition, type StreamKind } from './subjects.js';
export { formatCommitMetadata, parseCommitMetadata, type CommitMark } from './commit-mark.js';
export {
  Anchor,
  AnchorStatus,
  ApplyOutcome,
  DeletionReason,
  Heartbeat,
  OffsetApplied,
  OffsetCommitted,
  OffsetDeleted,
  OffsetTranslated,
  Problem,
  Progress,
  RefusalReason,
  ServiceRole,
  SkipReason,
  TimestampType,
  TranslationMethod,
  TranslationOutcome,
  Version,
} from './gen/offsetsync/v1/events.js';
