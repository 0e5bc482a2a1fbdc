// The public surface of @offsetsync/testbed: real servers on loopback for the integration tests, the
// benchmarks and `offsetsync sandbox`. Explicit named exports only.

export { freePort, freePorts } from './free-port.js';
export {
  brokerProperties,
  javaArgs,
  log4jProperties,
  newClusterId,
  startKafkaCluster,
  waitForKafka,
  type KafkaClusterInfo,
} from './kafka-cluster.js';
export {
  ensureKafkaDistribution,
  infraCacheDir,
  KAFKA_VERSION,
  type KafkaDistribution,
} from './kafka-dist.js';
export {
  DEFAULT_REPLICATION_POLICY,
  escapeRegex,
  IDENTITY_REPLICATION_POLICY,
  MIRROR_MAKER_MAIN_CLASS,
  mirrorMakerProperties,
  offsetTranslationLines,
  startMirrorMaker,
  stopMirrorMaker,
  type MirrorMakerInfo,
  type MirrorMakerOffsetTranslation,
  type MirrorMakerOptions,
} from './mirror-maker.js';
export {
  natsServerBinary,
  restartNatsServer,
  startNatsServer,
  waitForNats,
  type NatsServerInfo,
} from './nats-server.js';
export { isAlive, isGroupAlive, spawnDetached, stopProcess } from './processes.js';
export {
  readTestbedFile,
  REPO_ROOT,
  startTestbed,
  stopTestbed,
  testbedStateFile,
  writeTestbedFile,
  type TestbedInfo,
} from './testbed.js';
export { GiveUp, waitFor } from './wait.js';
