// The public surface of @offsetsync/testbed: real servers on loopback for the integration tests, the
// benchmarks and `offsetsync sandbox`. Explicit named exports only.

export { createCertificateAuthority, issueCertificate } from './certificates.js';
export { TestbedError } from './errors.js';
export { freePort } from './free-port.js';
export { bedKafkaCredentials, type KafkaClientCredentials } from './kafka-credentials.js';
export { ensureKafkaDistribution, KAFKA_VERSION } from './kafka-dist.js';
export {
  startMirrorMaker,
  stopMirrorMaker,
  type MirrorMakerInfo,
  type MirrorMakerOffsetTranslation,
} from './mirror-maker.js';
export { isAlive, isGroupAlive, spawnDetached, stopProcess } from './processes.js';
export { restartNatsServer, startNatsServer } from './nats-server.js';
export type { SecureTestbedOptions, TestbedSecurityInfo } from './secure-options.js';
export {
  readTestbedFile,
  REPO_ROOT,
  restartTestbedNats,
  startTestbed,
  stopTestbed,
  testbedStateFile,
  writeTestbedFile,
  type TestbedInfo,
} from './testbed.js';
export { randomPassword } from './testbed-security.js';
export { GiveUp, waitFor } from './wait.js';
