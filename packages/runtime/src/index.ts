// The public surface of @offsetsync/runtime. Explicit named exports only: what is not listed here is
// internal to the package.

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
export { CONFIG_FILE_ENV, ENV_PREFIX, envNameForPath } from './config/env-names.js';
export { readEnvOverrides, resolveEnvName } from './config/env-overrides.js';
export { describeConfigSchema, type ConfigFieldDescription } from './config/describe-config.js';
export { REDACTED, redactConfig } from './config/redact.js';
export { retiredSettings } from './config/retired-settings.js';
export { createLogger, REDACTED_LOG_PATHS, type CreateLoggerOptions, type Logger } from './logging/logger.js';
export { startTelemetry, type StartTelemetryOptions, type Telemetry } from './telemetry/telemetry.js';
export {
  runService,
  ServiceLifecycle,
  type LifecycleState,
  type ServiceLifecycleOptions,
  type SignalHandlerOptions,
  type SignalSource,
  type StateChangeListener,
} from './lifecycle/service-lifecycle.js';
export { bindServer, serverCredentials, shutdownServer, type GrpcServerTls } from './probes/grpc-server.js';
export { HealthStatusBoard, healthServer, ServingStatus } from './probes/health-status-board.js';
export { ProbeServer } from './probes/probe-server.js';
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
