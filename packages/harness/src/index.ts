// The public surface of @offsetsync/harness: what the tests and the benchmarks share to drive offsetsync
// against real servers (packages/testbed starts those). Explicit named exports only.

export { Cleanup, stopOnSignals } from './cleanup.js';
export { readPartition, TestReplicator, type ReplicatorOptions } from './replicator.js';
export { spawnService, type Role, type ServiceProcess } from './service-process.js';
export { startReplicator, startService } from './test-scoped.js';
export { goldenCommitMarks, goldenEvents, goldenMessage, type GoldenEvent } from './wire-golden.js';
export { acquireTestbed, releaseTestbed, type AcquiredTestbed } from './testbed.js';
