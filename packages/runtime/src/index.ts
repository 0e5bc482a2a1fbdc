// The public surface of @offsetsync/runtime. Explicit named exports only: what is not listed here is
// internal to the package.

export {
  OffsetSyncConfigSchema,
  TOPIC_NAME_PATTERN,
  type CollectorConfig,
  type CommitterConfig,
  type HealthConfig,
  type KafkaClusterConfig,
  type LinkMode,
  type OffsetSyncConfig,
  type TopicNames,
  type TranslatorConfig,
} from './config/schema.js';
export { loadConfig } from './config/load-config.js';
export { targetTopic, type TargetTopic } from './config/topic-naming.js';
export { linkFilter, type LinkFilter } from './config/link-filter.js';
export { provisionDeployment } from './provisioning/provision-deployment.js';
export { parseDuration } from './config/duration.js';
export { compileFilterPattern } from './config/filter-pattern.js';
export { ENV_PREFIX } from './config/env-names.js';
export { resolveEnvName } from './config/env-overrides.js';
export { describeConfigSchema, type ConfigFieldDescription } from './config/describe-config.js';
export { retiredSettings } from './config/retired-settings.js';
export { createLogger, type Logger } from './logging/logger.js';
export { type Telemetry } from './telemetry/telemetry.js';
export { failSpan, messagingSpan, type SyncStage } from './telemetry/messaging-spans.js';
export { bindServer, serverCredentials, shutdownServer } from './probes/grpc-server.js';
export { HealthStatusBoard, healthServer, ServingStatus } from './probes/health-status-board.js';
export { type HeartbeatState } from './heartbeat/heartbeat-publisher.js';
export { doublingBackoffMs, type BackoffSettings } from './lifecycle/doubling-backoff.js';
export { ProblemBoard } from './heartbeat/problem-board.js';
export {
  runServiceMain,
  type ServiceContext,
  type ServiceDefinition,
  type ServiceWorker,
} from './lifecycle/service-main.js';
