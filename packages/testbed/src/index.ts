// The public surface of @offsetsync/testbed: real servers on loopback for the integration tests, the
// benchmarks and `offsetsync sandbox`. Explicit named exports only.

export { freePort } from './free-port.js';
export { ensureKafkaDistribution, KAFKA_VERSION } from './kafka-dist.js';
export {
  startMirrorMaker,
  stopMirrorMaker,
  type MirrorMakerInfo,
  type MirrorMakerOffsetTranslation,
} from './mirror-maker.js';
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
