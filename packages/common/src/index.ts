// The public surface of @offsetsync/common. Explicit named exports only: what is not listed here is
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
  type OffsetSyncErrorOptions,
} from './errors.js';

export {
  CLUSTER_ALIAS_PATTERN,
  OffsetSyncConfigSchema,
  type CollectorConfig,
  type CommitterConfig,
  type ConfigFieldMeta,
  type HealthConfig,
  type KafkaClusterConfig,
  type LinkConfig,
  type LogLevel,
  type OffsetSyncConfig,
  type OffsetSyncConfigInput,
  type TranslatorConfig,
} from './config/schema.js';
export { loadConfig, type LoadConfigOptions } from './config/load-config.js';
export { durationMs, formatDuration, parseDuration, type DurationBounds } from './config/duration.js';
export {
  CONFIG_FILE_ENV,
  ENV_PREFIX,
  envNameForPath,
  readEnvOverrides,
  resolveEnvName,
} from './config/env-overrides.js';
export { describeConfigSchema, type ConfigFieldDescription } from './config/describe-config.js';
export { REDACTED, redactConfig } from './config/redact.js';

export { createLogger, REDACTED_LOG_PATHS, type CreateLoggerOptions, type Logger } from './logging/logger.js';

export { startTelemetry, type StartTelemetryOptions, type Telemetry } from './telemetry/telemetry.js';
export {
  extractTraceContext,
  injectTraceContext,
  traceIdOf,
  withSpanFromHeaders,
} from './telemetry/nats-trace-context.js';

export {
  runService,
  ServiceLifecycle,
  type LifecycleState,
  type ServiceLifecycleOptions,
  type SignalHandlerOptions,
  type SignalSource,
  type StateChangeListener,
} from './lifecycle/service-lifecycle.js';

export { KafkaReader, KafkaWriter } from './kafka/binary.js';

export { bindServer, serverCredentials, shutdownServer, type GrpcServerTls } from './grpc/grpc-server.js';
export { HealthStatusBoard, healthServer, ServingStatus } from './grpc/health-status-board.js';
export { ProbeServer } from './grpc/probe-server.js';
export {
  HealthCheckRequest,
  HealthCheckResponse,
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
  partitionSyncStateToJSON,
  WatchLinksRequest,
  type OffsetSyncHealthServer,
} from './gen/offsetsync/v1/health_service.js';

export { connectNats, type NatsConnectionSettings } from './nats/connection.js';
export {
  provisionDurableConsumer,
  provisionKvBucket,
  provisionStreams,
  streamSpecs,
  type DurableConsumerSpec,
  type ProvisionAction,
  type StreamSpec,
} from './nats/provisioning.js';
export { BatchConsumer, type BatchConsumerOptions } from './nats/batch-consumer.js';
export { EVENT_TYPE_HEADER, publishAll, type StreamMessage } from './nats/publish.js';
export {
  JetStreamApiError,
  JetStreamPublisher,
  WRONG_LAST_SEQUENCE,
  type JetStreamPublishOptions,
  type PublishAck,
  type StoredMessage,
} from './nats/jetstream-publisher.js';
export { decodeSubjectToken, encodeSubjectToken } from './nats/subject-token.js';
export { Names, type GroupPartition } from './nats/subjects.js';
export { formatCommitMetadata, parseCommitMetadata, type CommitMark } from './events/commit-mark.js';

export {
  buildHeartbeat,
  HeartbeatPublisher,
  type HeartbeatIdentity,
  type HeartbeatState,
} from './heartbeat/heartbeat-publisher.js';
export { ProblemBoard } from './heartbeat/problem-board.js';
export {
  configFileFromArgs,
  roleSectionProblems,
  runServiceMain,
  servedClusters,
  SOFTWARE_VERSION,
  type ServiceContext,
  type ServiceDefinition,
  type ServiceRoleName,
  type ServiceWorker,
} from './lifecycle/service-main.js';

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

export {
  GROUP_ACTIVE,
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
} from './kafka/kafka-adapter.js';
export { BrokerErrorCodes, toOffsetSyncError, type KafkaErrorContext } from './kafka/kafka-errors.js';
export { registerCompressionCodecs } from './kafka/compression-codecs.js';
export { recordFingerprint } from './kafka/record-fingerprint.js';
