// The end-to-end workload of the steady scenario (bench/scenarios/steady.ts, which `npm run -s bench:e2e`
// runs): how long after a consumer group commits on the source cluster its translated offset is committed
// on the target, with the three services running as processes, at 1 000 commits/s over 10 000 group
// partitions.
//
// Runs against real servers: the test bed's two Kafka clusters and nats-server (its own, always stopped
// at the end, unless OFFSETSYNC_TESTBED=reuse). It fills a topic on the source, copies it to the target
// with the test replicator, starts the built collector, translator and committer, commits every group
// partition once and waits until all of them are applied (the warm-up, which is also the bootstrap
// time), then commits at a steady rate with admin-style OffsetCommit requests and measures, from the
// OffsetApplied events, the time from each source commit to the target commit. Says a progress line a
// second and returns the result, which the scenario prints as its JSON line.
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import kafkajs, { type Admin } from 'kafkajs';
import {
  connect,
  consumerOpts,
  type JetStreamClient,
  type JetStreamManager,
  type JetStreamSubscription,
  type JsMsg,
} from 'nats';
import pino from 'pino';
import { Heartbeat, Names, OffsetApplied, OffsetCommitted, OffsetTranslated } from '@offsetsync/contracts';
import { provisionStreams, streamSpecs } from '@offsetsync/jetstream';
import { KafkaAdapter, type CommitEntry } from '@offsetsync/kafka';
import {
  acquireTestbed,
  releaseTestbed,
  TestReplicator,
  type AcquiredTestbed,
  type Cleanup,
  type Role,
  type ServiceProcess,
} from '@offsetsync/harness';
import { REPO_ROOT } from '@offsetsync/testbed';
import { startBenchService } from './bench-service.js';
import { Ledger, type Phase } from './e2e-ledger.js';
import { commitKey, StageTracker, STAGES, type LatencySummary } from './e2e-latency.js';
import { E2eWorkload } from './e2e-workload.js';
import { cpuSeconds, machineBusySeconds, RssSampler } from './process-stats.js';

const { Kafka, logLevel } = kafkajs;

/** Latency targets; a run that misses one still reports, and exits 1. */
const TARGET_P50_MS = 100;
const TARGET_P99_MS = 1_000;

/** What a run does; the steady scenario takes them from its options and the BENCH_* variables. */
export interface E2eSettings {
  /** Commits per second during the measurement (BENCH_RATE, default 1 000). */
  rate: number;
  /** How long commits are sent at the rate, after the warm-up. */
  seconds: number;
  /** The collector's offsets-topic fetch wait (BENCH_COALESCE_MS, default 20). */
  coalesceWindowMs: number;
  /** Follow the committed and translated streams too, for the per-stage breakdown (BENCH_STAGES, default on). */
  stages: boolean;
  /**
   * Connections the load generator commits through (BENCH_SOURCE_CONNECTIONS, default 4). A broker handles
   * one request of a connection at a time, and an OffsetCommit holds it until the coordinator wrote the
   * commit (up to group.coordinator.append.linger.ms, 5 ms): one connection tops out near 100 group commits
   * a second. Real groups commit from connections of their own.
   */
  sourceConnections: number;
  /** Run the services with `--cpu-prof` (BENCH_PROFILE=1). */
  profile: boolean;
}

/** The settings from the BENCH_* variables, for a run of `seconds`; throws on a value that is no positive number. */
export function e2eSettingsFrom(env: NodeJS.ProcessEnv, seconds: number): E2eSettings {
  return {
    rate: positiveNumber(env, 'BENCH_RATE', 1_000),
    seconds,
    coalesceWindowMs: positiveNumber(env, 'BENCH_COALESCE_MS', 20),
    stages: env.BENCH_STAGES !== '0',
    sourceConnections: positiveNumber(env, 'BENCH_SOURCE_CONNECTIONS', 4),
    profile: env.BENCH_PROFILE === '1',
  };
}

const GROUPS = 1_000;
const PARTITIONS = 10;
const RECORDS_PER_PARTITION = 2_000;
const HEARTBEAT_INTERVAL_MS = 1_000;
const SOURCE = 'source';
const TARGET = 'target';
/** The services of the pipeline; the benchmarks run no health service. */
type PipelineRole = Exclude<Role, 'health'>;
const ROLES: readonly PipelineRole[] = ['collector', 'translator', 'committer'];
/** Source commit requests in flight at once; more means the broker (or the bench) cannot keep up. */
const MAX_COMMITS_IN_FLIGHT = 64;
/** Groups committed at once during the warm-up. */
const WARMUP_CONCURRENCY = 16;
const PIPELINE_READY_TIMEOUT_MS = 120_000;
const WARMUP_TIMEOUT_MS = 300_000;
const POLL_INTERVAL_MS = 20;

function positiveNumber(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number: ${text}`);
  return value;
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** Follows a stream's subjects from now on, in order, with an ordered consumer (no durable state). */
async function follow(
  js: JetStreamClient,
  subject: string,
  handle: (message: JsMsg) => void,
  onError: (error: Error) => void,
): Promise<JetStreamSubscription> {
  const opts = consumerOpts();
  opts.orderedConsumer();
  opts.deliverNew();
  opts.callback((error, message) => {
    if (error !== null) onError(error);
    else if (message !== null) handle(message);
  });
  return js.subscribe(subject, opts);
}

/** When JetStream stored a message, epoch ms. */
function storedAtMs(message: JsMsg): number {
  return message.info.timestampNanos / 1e6;
}

async function lastHeartbeat(
  jsm: JetStreamManager,
  names: Names,
  role: Role,
  instanceId: string,
): Promise<Heartbeat | undefined> {
  try {
    const message = await jsm.streams.getMessage(names.stream('heartbeats'), {
      last_by_subj: names.heartbeat(role, instanceId),
    });
    return Heartbeat.decode(message.data);
  } catch {
    return undefined;
  }
}

/** Polls `probe` until it returns a value or `timeoutMs` passes (then undefined). */
async function poll<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  options: { timeoutMs: number; intervalMs: number },
): Promise<T | undefined> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined || Date.now() >= deadline) return value;
    await sleep(options.intervalMs);
  }
}

/** CPU seconds of each process the run involves, and of the whole machine. */
function cpuSnapshot(pids: Record<string, number>): { byProcess: Record<string, number>; machine: number } {
  const byProcess = Object.fromEntries(
    Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid) ?? 0]),
  );
  const usage = process.cpuUsage();
  byProcess.bench = (usage.user + usage.system) / 1e6;
  return { byProcess, machine: machineBusySeconds() };
}

async function createTopic(admin: Admin, topic: string): Promise<void> {
  await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }], waitForLeaders: true });
}

async function endOffsets(adapter: KafkaAdapter, topic: string): Promise<number[]> {
  const answers = await adapter.listOffsets(
    Array.from({ length: PARTITIONS }, (_, partition) => ({
      topic,
      partition,
      timestamp: 'latest' as const,
    })),
  );
  return answers.map((answer) => {
    if (answer.error) throw answer.error;
    return answer.offset;
  });
}

/** A cluster section of the services' config. */
function clusterConfig(bootstrapServers: string): Record<string, unknown> {
  return { bootstrapServers: [bootstrapServers], connectionTimeoutMs: '3s', requestTimeoutMs: '10s' };
}

function latencyText(summary: LatencySummary | undefined): string {
  return summary === undefined ? 'no events' : `p50 ${summary.p50_ms} ms p99 ${summary.p99_ms} ms`;
}

// --- the run -----------------------------------------------------------------------------------------

/** The exit code and the result line, printed after the cleanup so that it is the last line. */
export interface E2eOutcome {
  code: number;
  result: Record<string, unknown>;
}

/**
 * Runs the workload; every step registers its undo on `cleanup`, which the caller runs (and sets
 * `cleanup.failed` to false only when the run met its targets). `interrupted` tells whether a signal
 * arrived: what fails after it is a consequence, not news, and keeps no logs.
 */
export async function runE2e(
  settings: E2eSettings,
  context: { cleanup: Cleanup; interrupted: () => boolean; say: (line: string) => void },
): Promise<E2eOutcome> {
  const { cleanup, interrupted, say } = context;
  const {
    rate: RATE,
    seconds: SECONDS,
    coalesceWindowMs: COALESCE_WINDOW_MS,
    stages: STAGES_ON,
    sourceConnections: SOURCE_CONNECTIONS,
    profile: PROFILE,
  } = settings;
  /** How long the last commits may take to come back; long enough to drain a backlog of the whole run. */
  const DRAIN_TIMEOUT_MS = Math.max(120_000, SECONDS * 3_000);
  const suffix = randomBytes(4).toString('hex');
  const topic = `bench-e2e-${suffix}`;
  const groupPrefix = `bench-e2e-${suffix}-`;
  const probeGroup = `${groupPrefix}probe`;
  const collectorGroup = `offsetsync-bench-e2e-${suffix}`;
  const names = new Names(`bench_e2e_${suffix}`);
  const loadAtStart = loadavg()[0] ?? 0;
  say(`${cpus().length} cores, load average ${loadAtStart.toFixed(2)}`);
  say(
    `${RATE} commits/s for ${SECONDS} s over ${GROUPS * PARTITIONS} group partitions ` +
      `(${GROUPS} groups x ${PARTITIONS} partitions), coalescing window ${COALESCE_WINDOW_MS} ms`,
  );

  const testbedStart = acquireTestbed({ log: (line) => say(`test bed: ${line}`) });
  cleanup.push('stopping the test bed', async () => {
    const testbed = await testbedStart.catch(() => undefined);
    if (testbed === undefined) return;
    const kept = await releaseTestbed(testbed, { keepLogs: cleanup.failed && !interrupted() });
    if (kept !== undefined) say(`server logs kept in ${kept}`);
  });
  const testbed: AcquiredTestbed = await testbedStart;
  const { source, target, nats } = testbed.info;

  // kafkajs' complaints (retried by itself) go with the progress lines.
  const kafkaLog =
    (cluster: string): kafkajs.logCreator =>
    () =>
    ({ log }) => {
      const error: unknown = log.error;
      say(`kafkajs (${cluster}): ${log.message} ${typeof error === 'string' ? error : ''}`);
    };
  const sourceKafka = new Kafka({
    clientId: 'offsetsync-bench-e2e',
    brokers: [source.bootstrapServers],
    logLevel: logLevel.ERROR,
    logCreator: kafkaLog('source'),
  });
  const targetKafka = new Kafka({
    clientId: 'offsetsync-bench-e2e',
    brokers: [target.bootstrapServers],
    logLevel: logLevel.ERROR,
    logCreator: kafkaLog('target'),
  });
  const sourceAdmin = sourceKafka.admin();
  await sourceAdmin.connect();
  cleanup.push('disconnecting the source admin client', () => sourceAdmin.disconnect());
  const targetAdmin = targetKafka.admin();
  await targetAdmin.connect();
  cleanup.push('disconnecting the target admin client', () => targetAdmin.disconnect());
  const adapterFor = (bootstrapServers: string): KafkaAdapter =>
    new KafkaAdapter({
      cluster: { bootstrapServers: [bootstrapServers], connectionTimeoutMs: 3_000, requestTimeoutMs: 10_000 },
      clientId: 'offsetsync-bench-e2e',
      logger: pino({ level: 'silent' }),
    });
  const sourceAdapters = Array.from({ length: SOURCE_CONNECTIONS }, () =>
    adapterFor(source.bootstrapServers),
  );
  cleanup.push('disconnecting the source adapters', () =>
    Promise.all(sourceAdapters.map((a) => a.disconnect())),
  );
  const sourceAdapter = sourceAdapters[0] as KafkaAdapter;
  const targetAdapter = adapterFor(target.bootstrapServers);
  cleanup.push('disconnecting the target adapter', () => targetAdapter.disconnect());
  const nc = await connect({ servers: nats.url });
  cleanup.push('closing the NATS connection', () => nc.close());
  const jsm = await nc.jetstreamManager();
  const js = nc.jetstream();

  const workload = new E2eWorkload({
    groupPrefix,
    groups: GROUPS,
    topic,
    partitions: PARTITIONS,
    recordsPerPartition: RECORDS_PER_PARTITION,
    maxCommitsPerGroupPartition: 1 + Math.ceil((RATE * SECONDS) / (GROUPS * PARTITIONS)),
    seed: 1848,
  });

  if (!testbed.owned) {
    // A shared test bed outlives the run: leave it as it was found. Runs after the services stopped.
    cleanup.push('removing the topics, groups and streams of this run', async () => {
      const groups = [...workload.groups, probeGroup];
      await sourceAdmin.deleteGroups([...groups, collectorGroup]).catch(() => undefined);
      await targetAdmin.deleteGroups(groups).catch(() => undefined);
      await sourceAdmin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await targetAdmin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      for (const kind of ['committed', 'translated', 'applied', 'heartbeats'] as const) {
        await jsm.streams.delete(names.stream(kind)).catch(() => false);
      }
      await jsm.streams.delete(`KV_${names.bucket('applied-versions')}`).catch(() => false);
    });
  }

  // The data: a topic on the source, copied to the target the way MirrorMaker 2 would.
  const seedStart = performance.now();
  await createTopic(sourceAdmin, topic);
  const producer = sourceKafka.producer({ allowAutoTopicCreation: false, idempotent: true });
  await producer.connect();
  try {
    const base = Date.now() - 3_600_000;
    const perSend = 200;
    for (let first = 0; first < RECORDS_PER_PARTITION; first += perSend) {
      await producer.send({
        topic,
        acks: -1,
        messages: Array.from({ length: PARTITIONS }, (_, partition) =>
          Array.from({ length: Math.min(perSend, RECORDS_PER_PARTITION - first) }, (_, i) => ({
            partition,
            key: `key-${partition}-${first + i}`,
            value: `value-${partition}-${first + i}-${'x'.repeat(64)}`,
            timestamp: String(base + first + i),
          })),
        ).flat(),
      });
    }
  } finally {
    await producer.disconnect();
  }
  const replicator = new TestReplicator({
    source,
    target,
    topic,
    maxBatchRecords: 500,
  });
  cleanup.push('stopping the replicator', () => replicator.stop());
  await replicator.start();
  await replicator.waitUntilCaughtUp(120_000);
  // Nothing more is written to the topic: the replicator would only poll.
  await replicator.stop();
  const ends = await Promise.all([endOffsets(sourceAdapter, topic), endOffsets(targetAdapter, topic)]);
  for (const [cluster, offsets] of [
    [SOURCE, ends[0]],
    [TARGET, ends[1]],
  ] as const) {
    if (offsets.some((end) => end !== RECORDS_PER_PARTITION))
      throw new Error(`${cluster} topic ${topic} should hold ${RECORDS_PER_PARTITION} records a partition`);
  }
  say(
    `topic ${topic}: ${PARTITIONS} partitions x ${RECORDS_PER_PARTITION} records on the source, ` +
      `copied to the target (${Math.round(performance.now() - seedStart)} ms)`,
  );

  // The event streams first, so that the followers can start before any event is published.
  await provisionStreams(jsm, streamSpecs(names, 1));
  const stages = STAGES_ON ? new StageTracker() : undefined;
  const ledger = new Ledger(stages);
  let followErrors = 0;
  const onFollowError = (error: Error): void => {
    followErrors += 1;
    if (followErrors === 1) say(`event follower: ${error.message}`);
  };
  const subscriptions: JetStreamSubscription[] = [];
  cleanup.push('stopping the event followers', () =>
    Promise.resolve(subscriptions.forEach((s) => s.unsubscribe())),
  );
  subscriptions.push(
    await follow(
      js,
      names.appliedFilter(SOURCE, TARGET),
      (message) => ledger.onApplied(OffsetApplied.decode(message.data), storedAtMs(message)),
      onFollowError,
    ),
  );
  if (stages !== undefined) {
    subscriptions.push(
      await follow(
        js,
        names.committedFilter(SOURCE),
        (message) => {
          if (message.headers?.get('Offsetsync-Event') !== 'OffsetCommitted') return;
          stages.committed(OffsetCommitted.decode(message.data), storedAtMs(message));
        },
        onFollowError,
      ),
      await follow(
        js,
        names.translatedFilter(SOURCE, TARGET),
        (message) => stages.translated(OffsetTranslated.decode(message.data), storedAtMs(message)),
        onFollowError,
      ),
    );
  }

  // The services.
  const common = {
    clusters: {
      [SOURCE]: clusterConfig(source.bootstrapServers),
      [TARGET]: clusterConfig(target.bootstrapServers),
    },
    links: [{ source: SOURCE, target: TARGET }],
    nats: { servers: [nats.url], subjectPrefix: names.prefix },
    heartbeat: { intervalMs: `${HEARTBEAT_INTERVAL_MS}ms` },
    telemetry: { prometheus: { enabled: false } },
    probes: { port: 0 },
    logging: { level: 'warn' },
  };
  const sections: Record<PipelineRole, Record<string, unknown>> = {
    collector: {
      collector: {
        cluster: SOURCE,
        consumerGroup: collectorGroup,
        groups: { include: [`^${groupPrefix}`] },
        fetchMaxWaitMs: `${COALESCE_WINDOW_MS}ms`,
      },
    },
    translator: { translator: { target: TARGET } },
    committer: { committer: { target: TARGET } },
  };
  const instanceId = (role: PipelineRole): string => `bench-e2e-${role}`;
  const profileDir = join(REPO_ROOT, '.infra', 'profiles');
  const services = {} as Record<PipelineRole, ServiceProcess>;
  for (const role of ROLES) {
    const service = await startBenchService(
      role,
      { ...common, instance: { id: instanceId(role) }, ...sections[role] },
      {
        nodeArgs: PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
      },
    );
    services[role] = service;
    cleanup.push(`stopping the ${role}`, async () => {
      const code = await service.stop();
      if (code !== 0 && !interrupted()) say(`the ${role} exited with code ${String(code)}`);
      if (cleanup.failed && !interrupted()) say(`${role} config and log kept in ${service.dir}`);
      else await rm(service.dir, { recursive: true, force: true });
    });
  }
  const checkServices = (): void => {
    for (const service of Object.values(services)) {
      if (!service.running()) throw new Error(`the ${service.role} exited; see ${service.logFile}`);
    }
  };
  const servicesStart = performance.now();
  for (const role of ROLES) {
    const beat = await poll(
      async () => {
        checkServices();
        return lastHeartbeat(jsm, names, role, instanceId(role));
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    if (beat === undefined) throw new Error(`no heartbeat from the ${role} within 60 s`);
  }
  say(
    `services running: ${ROLES.map((r) => `${r} pid ${services[r].pid}`).join(', ')} ` +
      `(${Math.round(performance.now() - servicesStart)} ms)`,
  );

  const rss = Object.fromEntries(ROLES.map((role) => [role, new RssSampler(services[role].pid)])) as Record<
    PipelineRole,
    RssSampler
  >;
  for (const sampler of Object.values(rss)) sampler.start(250);
  cleanup.push('stopping the memory samplers', () =>
    Promise.resolve(Object.values(rss).forEach((s) => s.stop())),
  );
  const pids: Record<string, number> = {
    ...Object.fromEntries(ROLES.map((role) => [role, services[role].pid])),
    source_kafka: source.pid,
    target_kafka: target.pid,
    nats: nats.pid,
  };

  let commitsSent = 0;
  /** Commits one group's entries on the source; never rejects (a failure is counted). */
  const commit = async (group: string, entries: CommitEntry[], phase: Phase): Promise<void> => {
    const adapter = sourceAdapters[commitsSent++ % sourceAdapters.length] as KafkaAdapter;
    const keys = entries.map((e) => commitKey(group, e.partition, e.offset));
    keys.forEach((key, i) => ledger.expect(key, phase, group, entries[i]!.partition, entries[i]!.offset));
    const sentAt = performance.now();
    try {
      const answers = await adapter.commitOffsets(group, entries);
      ledger.commitRoundTrip[phase].add(performance.now() - sentAt);
      answers.forEach((answer, i) => {
        if (answer.error === undefined) {
          ledger.committed[phase] += 1;
          return;
        }
        ledger.commitErrors += 1;
        ledger.lastCommitError = answer.error.message;
        ledger.forget(keys[i] as string);
      });
    } catch (error: unknown) {
      ledger.commitErrors += entries.length;
      ledger.lastCommitError = error instanceof Error ? error.message : String(error);
      for (const key of keys) ledger.forget(key);
    }
  };

  /** Waits until every commit of `phase` has its OffsetApplied event; false after `timeoutMs`. */
  const settled = async (phase: Phase, timeoutMs: number): Promise<boolean> =>
    (await poll(
      () => {
        checkServices();
        return ledger.open[phase] === 0 ? true : undefined;
      },
      { timeoutMs, intervalMs: POLL_INTERVAL_MS },
    )) === true;

  // Progress: one line a second from the warm-up on.
  let phase: Phase = 'probe';
  let previous = {
    at: performance.now(),
    committed: 0,
    resolved: 0,
    cpu: Object.fromEntries(ROLES.map((r) => [r, cpuSeconds(services[r].pid) ?? 0])),
  };
  const phaseStartedAt: Record<Phase, number> = { probe: 0, warmup: 0, measure: 0 };
  const reporter = setInterval(() => {
    if (phase === 'probe') return;
    const now = performance.now();
    const seconds = (now - previous.at) / 1000;
    const committed = ledger.committed[phase];
    const resolved = ledger.resolved[phase];
    const cpu = Object.fromEntries(ROLES.map((r) => [r, cpuSeconds(services[r].pid) ?? 0]));
    const cpuText = ROLES.map(
      (r) => `${r} ${Math.round((100 * ((cpu[r] ?? 0) - (previous.cpu[r] ?? 0))) / seconds)}%`,
    ).join(' ');
    const rssText = ROLES.map((r) => Math.round(rss[r].sample() / 2 ** 20)).join('/');
    say(
      `${phase} ${((now - phaseStartedAt[phase]) / 1000).toFixed(1)} s` +
        `  committed ${committed} (${Math.round((committed - previous.committed) / seconds)}/s)` +
        `  resolved ${resolved} (${Math.round((resolved - previous.resolved) / seconds)}/s)` +
        `  open ${ledger.open[phase]}  last second ${latencyText(ledger.latency[phase].takeWindow())}` +
        `  cpu ${cpuText}  rss MB ${rssText}`,
    );
    previous = { at: now, committed, resolved, cpu };
  }, 1_000);
  cleanup.push('stopping the progress lines', () => Promise.resolve(clearInterval(reporter)));
  const enterPhase = (next: Phase): void => {
    phase = next;
    phaseStartedAt[next] = performance.now();
    previous = { ...previous, at: phaseStartedAt[next], committed: 0, resolved: 0 };
    ledger.latency[next].takeWindow();
  };

  // Probe: one commit through the whole pipeline, so the warm-up starts with every service ready.
  const probeStart = performance.now();
  await commit(probeGroup, [{ topic, partition: 0, offset: 1, metadata: null }], 'probe');
  if (ledger.committed.probe !== 1) throw new Error(`the probe commit failed: ${ledger.lastCommitError}`);
  if (!(await settled('probe', PIPELINE_READY_TIMEOUT_MS)))
    throw new Error(`the probe commit was not applied within ${PIPELINE_READY_TIMEOUT_MS / 1000} s`);
  say(
    `pipeline ready: a probe commit went through in ${Math.round(performance.now() - probeStart)} ms ` +
      `(${latencyText(ledger.latency.probe.summary())})`,
  );

  // Warm-up: every group partition once; the time until all are applied is the bootstrap time.
  enterPhase('warmup');
  const warmupStartMs = Date.now();
  let nextGroup = 0;
  await Promise.all(
    Array.from({ length: WARMUP_CONCURRENCY }, async () => {
      while (nextGroup < GROUPS) {
        const group = nextGroup++;
        await commit(workload.groups[group] as string, workload.next(group), 'warmup');
      }
    }),
  );
  const warmupCommitsMs = Date.now() - warmupStartMs;
  say(`warm-up: ${ledger.committed.warmup} commits sent in ${warmupCommitsMs} ms; waiting for all`);
  if (!(await settled('warmup', WARMUP_TIMEOUT_MS)))
    throw new Error(
      `warm-up: ${ledger.open.warmup} of ${workload.size} commits not applied after ${WARMUP_TIMEOUT_MS / 1000} s`,
    );
  const bootstrapMs = ledger.lastResolvedAtMs.warmup - warmupStartMs;
  const bootstrap = ledger.latency.warmup.summary();
  say(`warm-up: all ${workload.size} group partitions applied ${bootstrapMs} ms after the first commit`);

  // Measurement: RATE commits/s, a group (all of its partitions) at a time, rotating through the groups.
  enterPhase('measure');
  const cpuBefore = cpuSnapshot(pids);
  const groupRate = RATE / PARTITIONS;
  const total = Math.round(groupRate * SECONDS);
  const inFlight = new Set<Promise<void>>();
  let issued = 0;
  let throttled = 0;
  const sendStart = performance.now();
  while (issued < total) {
    checkServices();
    const due = Math.min(total, Math.floor(((performance.now() - sendStart) * groupRate) / 1000) + 1);
    while (issued < due && inFlight.size < MAX_COMMITS_IN_FLIGHT) {
      const group = issued % GROUPS;
      const sending: Promise<void> = commit(
        workload.groups[group] as string,
        workload.next(group),
        'measure',
      );
      inFlight.add(sending);
      void sending.finally(() => inFlight.delete(sending));
      issued += 1;
    }
    if (issued < due) {
      // The source broker answers slower than commits fall due: wait for an answer, then catch up.
      throttled += 1;
      await Promise.race(inFlight);
      continue;
    }
    await sleep(Math.max(0, sendStart + (issued * 1000) / groupRate - performance.now()));
  }
  await Promise.all(inFlight);
  const sendEnd = performance.now();
  const sendSeconds = (sendEnd - sendStart) / 1000;
  const commitsPerSec = Math.round(ledger.committed.measure / sendSeconds);
  say(
    `sent ${ledger.committed.measure} commits in ${sendSeconds.toFixed(1)} s (${commitsPerSec}/s); ` +
      `waiting for the last ones`,
  );
  const drained = await settled('measure', DRAIN_TIMEOUT_MS);
  const measureEnd = performance.now();
  const cpuAfter = cpuSnapshot(pids);
  clearInterval(reporter);
  if (drained)
    say(`every commit resolved ${Math.round(measureEnd - sendEnd)} ms after the last one was sent`);
  else
    say(
      `${ledger.open.measure} commits still open ${DRAIN_TIMEOUT_MS / 1000} s after the last one was sent; ` +
        'the percentiles cover only the commits that came back, so they understate the latency',
    );

  // The services' own counts, from a heartbeat sent after the end.
  const endMs = Date.now();
  const outcomes: Record<string, Record<string, number>> = {};
  const problems: string[] = [];
  for (const role of ROLES) {
    const beat = await poll(
      async () => {
        const heartbeat = await lastHeartbeat(jsm, names, role, instanceId(role));
        return heartbeat !== undefined && heartbeat.sentAtMs >= endMs ? heartbeat : undefined;
      },
      { timeoutMs: 3 * HEARTBEAT_INTERVAL_MS, intervalMs: 100 },
    );
    outcomes[role] = beat?.progress?.eventsByOutcome ?? {};
    for (const problem of beat?.problems ?? []) problems.push(`${role}: ${problem.code}: ${problem.detail}`);
  }
  for (const problem of problems) say(`problem reported: ${problem}`);

  const measured = ledger.latency.measure.summary();
  const stageSummaries = stages?.summaries();
  if (stageSummaries !== undefined) {
    say('where the time goes (measured commits, ms):');
    for (const stage of STAGES) {
      const s = stageSummaries[stage.name];
      say(
        `  ${stage.name.padEnd(36)} ${s === undefined ? 'no samples' : `p50 ${s.p50_ms}  p90 ${s.p90_ms}  p99 ${s.p99_ms}  max ${s.max_ms}`}  (${stage.what})`,
      );
    }
  }
  if (ledger.commitErrors > 0)
    say(`${ledger.commitErrors} source commits failed; the last: ${ledger.lastCommitError}`);
  if (PROFILE) say(`service CPU profiles are written to ${profileDir} when the services stop`);

  const cpuByProcess = Object.fromEntries(
    Object.entries(cpuAfter.byProcess).map(([name, value]) => [
      name,
      round(value - (cpuBefore.byProcess[name] ?? 0), 2),
    ]),
  );
  const measureSeconds = (measureEnd - sendStart) / 1000;
  const p50 = measured?.p50_ms ?? Number.POSITIVE_INFINITY;
  const p99 = measured?.p99_ms ?? Number.POSITIVE_INFINITY;
  const ok =
    drained &&
    p50 <= TARGET_P50_MS &&
    p99 <= TARGET_P99_MS &&
    ledger.commitErrors === 0 &&
    commitsPerSec >= 0.95 * RATE;
  if (p50 > TARGET_P50_MS || p99 > TARGET_P99_MS)
    say(`latency above the targets (p50 <= ${TARGET_P50_MS} ms, p99 <= ${TARGET_P99_MS} ms)`);
  if (commitsPerSec < 0.95 * RATE) say(`the source commit rate fell short of ${RATE}/s`);
  const roundTrip = ledger.commitRoundTrip.measure.summary();
  const skippedCount = Object.values(ledger.skipped.measure).reduce((sum, n) => sum + n, 0);
  cleanup.failed = !ok;
  return {
    code: ok ? 0 : 1,
    result: {
      p50_ms: measured?.p50_ms ?? null,
      p99_ms: measured?.p99_ms ?? null,
      max_ms: measured?.max_ms ?? null,
      p90_ms: measured?.p90_ms ?? null,
      mean_ms: measured?.mean_ms ?? null,
      commits_per_sec: commitsPerSec,
      target_rate: RATE,
      group_partitions: workload.size,
      seconds: round(sendSeconds, 3),
      commits: ledger.committed.measure,
      applied: ledger.latency.measure.count,
      skipped: skippedCount,
      skipped_by_reason: ledger.skipped.measure,
      missing: ledger.open.measure,
      commit_errors: ledger.commitErrors,
      unmatched_events: ledger.unmatchedEvents,
      superseded: ledger.superseded.measure,
      drained,
      drained_ms_after_last_commit: drained ? Math.round(measureEnd - sendEnd) : null,
      send_throttled: throttled,
      source_commit_rtt_p50_ms: roundTrip?.p50_ms ?? null,
      source_commit_rtt_p99_ms: roundTrip?.p99_ms ?? null,
      source_connections: SOURCE_CONNECTIONS,
      bootstrap_ms: bootstrapMs,
      bootstrap_commits_sent_ms: warmupCommitsMs,
      bootstrap_p50_ms: bootstrap?.p50_ms ?? null,
      bootstrap_p99_ms: bootstrap?.p99_ms ?? null,
      bootstrap_max_ms: bootstrap?.max_ms ?? null,
      bootstrap_skipped_by_reason: ledger.skipped.warmup,
      stages:
        stageSummaries === undefined
          ? null
          : Object.fromEntries(
              Object.entries(stageSummaries).map(([name, s]) => [
                name,
                s === undefined ? null : { p50_ms: s.p50_ms, p99_ms: s.p99_ms, max_ms: s.max_ms },
              ]),
            ),
      stages_complete: stages?.complete() ?? null,
      outcomes,
      problems,
      rss_peak_mb: Object.fromEntries(ROLES.map((r) => [r, round(rss[r].peakBytes / 2 ** 20, 1)])),
      cpu_seconds: cpuByProcess,
      machine_cores_busy: round((cpuAfter.machine - cpuBefore.machine) / measureSeconds, 2),
      cores: cpus().length,
      load_avg_at_start: round(loadAtStart, 2),
      coalesce_window_ms: COALESCE_WINDOW_MS,
      follow_errors: followErrors,
      node: process.version,
    },
  };
}
