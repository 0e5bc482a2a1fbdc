// The bootstrap scenario's added-target phase (issue 18, a target added later): once offsetsync runs with
// its groups on the first target, a second target joins the running system. Its cluster holds the topic
// copied from the source after records of its own (offsets unlike the source's and the first target's);
// a translator and a committer start for the new link. Measured: how long until every group partition
// stands exactly on the new target (the same ledger and record-identity rule as offsetsync's main
// measurement), the collector's count of commit records read before and after (it must read nothing
// again: the new link starts from the streams' current state), and each process's CPU seconds.
import { loadavg } from 'node:os';
import kafkajs from 'kafkajs';
import pino from 'pino';
import { KafkaAdapter } from '@offsetsync/kafka';
import { TestReplicator, type Cleanup } from '@offsetsync/harness';
import {
  addedTargetFailures,
  commitsRead,
  cpuDuring,
  type CollectorReading,
} from './added-target-verdict.js';
import { BootstrapLedger, forEachLimited } from './bootstrap-ledger.js';
import { observeGroup, readTargetPartition, type ComparisonBed } from './comparison-bed.js';
import { cpuSeconds } from './process-stats.js';

const { Kafka, logLevel } = kafkajs;

/** A poll round starts at most this often, so a small run does not poll the broker flat out. */
const MIN_ROUND_MS = 250;
const PROGRESS_EVERY_MS = 5_000;
/** Longest wait for a collector heartbeat that shows what the phase needs. */
const HEARTBEAT_WAIT_MS = 30_000;
/**
 * Heartbeats the collector must send after the last look at the target before its count is read again:
 * a collector reading the topic again would have counted by then (the e2e test waits as long).
 */
const HEARTBEATS_AFTER = 2;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Creates `topic` on the bed's cluster `target` with `ownRecords(p)` records of its own in partition p,
 * then copies every record of the source's topic after them (key, value, headers and timestamp kept, as
 * MirrorMaker's identity policy does) and stops copying: the new target's replication has run before its
 * link joins, as an operator would set it up.
 */
export async function copyToAddedTarget(options: {
  bed: ComparisonBed;
  target: string;
  topic: string;
  partitions: number;
  ownRecords: (partition: number) => number;
  say: (line: string) => void;
}): Promise<void> {
  const { bed, target, topic, partitions } = options;
  const cluster = bed.testbed.info.clusters[target];
  if (cluster === undefined) throw new Error(`the bed has no cluster ${target}`);
  const kafka = new Kafka({
    clientId: 'bench-added-target',
    brokers: [cluster.bootstrapServers],
    logLevel: logLevel.ERROR,
    // On the scenario's progress lines, not as JSON on the console (a first produce to a new topic may
    // meet a leader not yet elected, which kafkajs retries and logs).
    logCreator: () => (entry) => options.say(`kafkajs (${target}): ${entry.log.message}`),
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
  const producer = kafka.producer();
  await producer.connect();
  try {
    await producer.send({
      topic,
      messages: Array.from({ length: partitions }, (_, p) =>
        Array.from({ length: options.ownRecords(p) }, (_, i) => ({ partition: p, value: `own:${p}:${i}` })),
      ).flat(),
    });
  } finally {
    await producer.disconnect();
  }
  const began = Date.now();
  const replicator = new TestReplicator({
    source: { bootstrapServers: bed.testbed.info.source.bootstrapServers },
    target: { bootstrapServers: cluster.bootstrapServers },
    topic,
    createTopic: false,
    maxBatchRecords: 1_000,
  });
  try {
    await replicator.start();
    await replicator.waitUntilCaughtUp(180_000);
  } finally {
    await replicator.stop();
  }
  options.say(`${topic} copied to ${target} after its own records in ${Date.now() - began} ms`);
}

/** What the phase needs of the bootstrap scenario. */
interface AddedTargetOptions {
  bed: ComparisonBed;
  cleanup: Cleanup;
  say: (line: string) => void;
  /** The bed's cluster that joins (one of its `addedTargets`), holding `topic` (see copyToAddedTarget). */
  target: string;
  topic: string;
  /** offsetsync's groups, committed on the source before the systems started. */
  groups: readonly string[];
  partitions: number;
  records: number;
  /** The source position group g committed for partition p (as the main measurement expects it). */
  expected: (group: number, partition: number) => number;
  /** Whether offsetsync had every group partition applied on the first target. */
  firstTargetComplete: boolean;
  deadlineMs: number;
  pollConcurrency: number;
  connections: number;
}

/** The phase's result line (under `added_target`) and what failed (empty when it passed). */
interface AddedTargetResult {
  result: Record<string, unknown>;
  failures: string[];
}

/**
 * Adds the link to `target` to the running system and measures it (see the file comment). Leaves the
 * new link's services running; the bed's `stopOffsetsync` stops them with the rest.
 */
export async function measureAddedTarget(options: AddedTargetOptions): Promise<AddedTargetResult> {
  const { bed, say, target, topic, groups, partitions, records } = options;
  const cluster = bed.testbed.info.clusters[target];
  if (cluster === undefined) throw new Error(`the bed has no cluster ${target}`);
  const adapters = Array.from(
    { length: options.connections },
    () =>
      new KafkaAdapter({
        cluster: {
          bootstrapServers: [cluster.bootstrapServers],
          connectionTimeoutMs: 3_000,
          requestTimeoutMs: 10_000,
        },
        clientId: 'bench-added-target',
        logger: pino({ level: 'silent' }),
      }),
  );
  options.cleanup.push(`disconnecting the poll connections to ${target}`, () =>
    Promise.all(adapters.map((a) => a.disconnect())),
  );
  const copy: Array<Array<number | undefined>> = Array.from({ length: partitions }, () => []);
  for (let p = 0; p < partitions; p++) await readTargetPartition(adapters[0]!, topic, p, copy[p]!);

  const groupPartitions = groups.length * partitions;
  const before = await collectorReading(
    bed,
    (r) => commitsRead(r) >= groupPartitions,
    `the collector's heartbeat counting all ${groupPartitions} commits`,
  );

  // Each process's CPU from now on; the servers too, since a new target's load falls on them as well.
  const processes = (): Map<string, number> =>
    new Map([
      ...bed.services.map((s) => [s.role, s.pid] as const),
      ['nats_server', bed.testbed.info.nats.pid] as const,
      ...Object.values(bed.testbed.info.clusters).map((c) => [`kafka_${c.name}`, c.pid] as const),
    ]);
  const cpuAt = (pids: ReadonlyMap<string, number>): Map<string, number | undefined> =>
    new Map([...pids].map(([name, pid]) => [name, cpuSeconds(pid)]));
  const load = loadavg().map((l) => Math.round(l * 100) / 100);
  const cpuAtStart = cpuAt(processes());
  const startMs = Date.now();
  say(
    `adding the target ${target}: starting its translator and committer; the clock runs from now (load average ${load.join(' ')})`,
  );
  const ledger = new BootstrapLedger('exact', groups, partitions, options.expected, startMs);
  // Polling starts at once: the services' start is part of the time measured.
  let startError: Error | undefined;
  const starting = bed.startLink(target).then(
    (services) => ({ ms: Date.now() - startMs, services }),
    (error: unknown) => {
      const failed = error instanceof Error ? error : new Error(String(error));
      startError = failed;
      return { error: failed };
    },
  );

  let polls = 0;
  let pollErrors = 0;
  const pollGroup = async (g: number, adapter: KafkaAdapter): Promise<void> => {
    // A poll that fails is counted and the group polled again in the next round.
    if (await observeGroup(ledger, g, adapter, topic, copy, records)) polls += 1;
    else pollErrors += 1;
  };
  const progress: Array<[number, number]> = [];
  let lastProgress = startMs;
  for (;;) {
    if (startError !== undefined) throw startError;
    const open = ledger.openGroupIndexes();
    if (open.length === 0 || Date.now() - startMs >= options.deadlineMs) break;
    if (options.cleanup.stopping) throw new Error('stopped while polling the added target');
    const roundStart = Date.now();
    await forEachLimited(open, options.pollConcurrency, (g, i) =>
      pollGroup(g, adapters[i % adapters.length]!),
    );
    const now = Date.now();
    if (now - lastProgress >= PROGRESS_EVERY_MS) {
      lastProgress = now;
      const s = Math.round((now - startMs) / 100) / 10;
      progress.push([s, ledger.applied]);
      say(`${target}: ${s} s: ${ledger.applied} of ${groupPartitions} group partitions exact`);
    }
    await sleep(Math.max(0, MIN_ROUND_MS - (now - roundStart)));
  }
  const measuredMs = Date.now() - startMs;
  progress.push([Math.round(measuredMs / 100) / 10, ledger.applied]);
  const started = await starting;
  if ('error' in started) throw started.error;
  const newServices = started.services.map((s) => [`${target}_${s.role}`, s.pid] as const);
  const cpuAtEnd = cpuAt(new Map([...processes(), ...newServices]));
  say(`${target}: stopped polling after ${measuredMs} ms, ${ledger.applied} exact`);
  // One last look at every group: where each group partition stands now, applied in time or not.
  await forEachLimited(
    groups.map((_, g) => g),
    options.pollConcurrency,
    (g, i) => pollGroup(g, adapters[i % adapters.length]!),
  );
  const lookedMs = Date.now();
  const after = await collectorReading(
    bed,
    (r) => r.sentAtMs >= lookedMs + HEARTBEATS_AFTER * r.intervalMs,
    `a collector heartbeat ${HEARTBEATS_AFTER} intervals after the last look at ${target}`,
  );

  const summary = ledger.summary();
  const failures = addedTargetFailures(summary, before, after);
  const cpu = cpuDuring(cpuAtStart, cpuAtEnd);
  const serverNames = new Set(['nats_server', ...[...cpuAtEnd.keys()].filter((n) => n.startsWith('kafka_'))]);
  return {
    failures,
    result: {
      target,
      first_target_all_applied: options.firstTargetComplete,
      group_partitions: summary.group_partitions,
      exact: summary.exact,
      not_exact: summary.group_partitions - summary.exact,
      all_exact_ms: summary.all_applied_ms,
      p50_ms: summary.p50_ms,
      p99_ms: summary.p99_ms,
      services_started_ms: started.ms,
      measured_ms: measuredMs,
      collector_commits_read_before: commitsRead(before),
      collector_commits_read_after: commitsRead(after),
      collector_outcomes_before: before.eventsByOutcome,
      collector_outcomes_after: after.eventsByOutcome,
      cpu_seconds: Object.fromEntries(Object.entries(cpu).filter(([name]) => !serverNames.has(name))),
      servers_cpu_seconds: Object.fromEntries(Object.entries(cpu).filter(([name]) => serverNames.has(name))),
      load_average_at_start: load,
      polls,
      poll_errors: pollErrors,
      not_exact_sample: summary.not_applied_sample,
      progress,
      passed: failures.length === 0,
      failures,
    },
  };
}

/** A collector heartbeat as the phase reads it: the check's reading and the interval it is sent at. */
type CollectorBeat = CollectorReading & { intervalMs: number };

/** Polls the collector's heartbeats until one satisfies `wanted`; fails naming `what` after a while. */
async function collectorReading(
  bed: ComparisonBed,
  wanted: (reading: CollectorBeat) => boolean,
  what: string,
): Promise<CollectorBeat> {
  const deadline = Date.now() + HEARTBEAT_WAIT_MS;
  let last: CollectorBeat | undefined;
  for (;;) {
    const beat = await bed.collectorHeartbeat();
    if (beat !== undefined) {
      const reading = {
        startedAtMs: beat.startedAtMs,
        sentAtMs: beat.sentAtMs,
        intervalMs: beat.intervalMs,
        eventsByOutcome: beat.progress?.eventsByOutcome ?? {},
      };
      if (wanted(reading)) return reading;
      last = reading;
    }
    if (Date.now() >= deadline)
      throw new Error(
        `no ${what} within ${HEARTBEAT_WAIT_MS} ms (last heartbeat: ${last === undefined ? 'none' : JSON.stringify(last)})`,
      );
    await sleep(250);
  }
}
