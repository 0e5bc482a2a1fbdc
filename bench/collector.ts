// Collector throughput: how many offset commits per second one collector process turns into
// OffsetCommitted events on JetStream, sustained, with 10 000 group partitions committing.
//
//   npm run -s bench:collector                        # 10 000 commits/s for 30 s
//   BENCH_RATE=20000 BENCH_SECONDS=60 npm run -s bench:collector
//   OFFSETSYNC_TESTBED=reuse npm run -s bench:collector   # against `npm run infra -- up`
//   BENCH_PROFILE=1 npm run -s bench:collector        # collector CPU profile into .infra/profiles
//
// Runs against real servers: a source Kafka cluster and nats-server from the test bed (its own, always
// stopped at the end, unless OFFSETSYNC_TESTBED=reuse). It fills a data topic with records, starts the
// built collector as a process reading an offsets-format topic, writes commit records into that topic at
// a steady rate and measures how soon the collector has handled every one of them: its consumer group's
// committed position on the offsets topic reaches the log end only after JetStream acknowledged the
// events of everything before it. Prints a progress line a second and, last, one JSON line.
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import kafkajs, { type Producer } from 'kafkajs';
import { connect, type JetStreamManager } from 'nats';
import pino from 'pino';
import { AnchorStatus, Heartbeat, Names, OffsetCommitted } from '@offsetsync/contracts';
import { KafkaAdapter, recordFingerprint } from '@offsetsync/kafka';
import {
  acquireTestbed,
  Cleanup,
  releaseTestbed,
  stopOnSignals,
  type AcquiredTestbed,
  type ServiceProcess,
} from '@offsetsync/harness';
import { REPO_ROOT } from '@offsetsync/testbed';
import { startBenchService } from './support/bench-service.js';
import { CommitWorkload, seededRandom } from './support/commit-workload.js';
import { cpuSeconds, machineBusySeconds, RssSampler } from './support/process-stats.js';

const { Kafka, logLevel } = kafkajs;

/** Commits per second the collector must sustain; below it the run still reports, and exits 1. */
const TARGET_COMMITS_PER_SEC = 5_000;
const RATE = positiveNumber('BENCH_RATE', 10_000);
const SECONDS = positiveNumber('BENCH_SECONDS', 30);
const COALESCE_WINDOW_MS = positiveNumber('BENCH_COALESCE_MS', 100);
/**
 * Records per record batch in the data topic. About 10 KB at 100, what a Java producer with its default
 * 16 KB batch.size writes for records of this size.
 */
const DATA_BATCH_RECORDS = positiveNumber('BENCH_DATA_BATCH', 100);
const PROFILE = process.env.BENCH_PROFILE === '1';

const GROUPS = 1_000;
const DATA_PARTITIONS = 10;
const RECORDS_PER_PARTITION = 1_000;
const OFFSETS_PARTITIONS = 10;
/** A tenth of the groups make half of the commits: busy groups commit several times a second. */
const HOT_GROUP_SHARE = 0.1;
const HOT_COMMIT_SHARE = 0.5;
const SAMPLE_SIZE = 100;
const HEARTBEAT_INTERVAL_MS = 500;
const INSTANCE_ID = 'bench-collector';
const SOURCE = 'source';
/** The producer sends at most this often, so each send carries many records (200 at 10 000/s). */
const MIN_SEND_INTERVAL_MS = 20;
const POLL_INTERVAL_MS = 20;

function positiveNumber(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number: ${text}`);
  return value;
}

function say(line: string): void {
  console.log(`collector: ${line}`);
}

// --- cleanup ---------------------------------------------------------------------------------------

/** Undo steps, run last registered first, once, whether the run ends, fails or is interrupted. */
const cleanup = new Cleanup((line) => console.error(`collector: ${line}`));
/** True after SIGINT/SIGTERM: what fails after it is a consequence, not news, and keeps no logs. */
const interrupted = stopOnSignals(cleanup, say);

// --- measurement helpers -----------------------------------------------------------------------------

interface OffsetsPosition {
  /** The collector group's committed offset per offsets-topic partition (0 when none yet). */
  committed: number[];
  /** The log end offset per offsets-topic partition. */
  end: number[];
}

function sum(values: readonly number[]): number {
  return values.reduce((total, v) => total + v, 0);
}

function lagOf(position: OffsetsPosition): number {
  return sum(position.end.map((end, p) => Math.max(0, end - (position.committed[p] ?? 0))));
}

async function committedOffsets(adapter: KafkaAdapter, group: string, topic: string): Promise<number[]> {
  const committed = new Array<number>(OFFSETS_PARTITIONS).fill(0);
  for (const entry of await adapter.fetchCommittedOffsets(group, [topic])) {
    committed[entry.partition] = entry.offset;
  }
  return committed;
}

async function endOffsets(adapter: KafkaAdapter, topic: string, partitions: number): Promise<number[]> {
  const answers = await adapter.listOffsets(
    Array.from({ length: partitions }, (_, partition) => ({
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

async function lastHeartbeat(jsm: JetStreamManager, names: Names): Promise<Heartbeat | undefined> {
  try {
    const message = await jsm.streams.getMessage(names.stream('heartbeats'), {
      last_by_subj: names.heartbeat('collector', INSTANCE_ID),
    });
    return Heartbeat.decode(message.data);
  } catch {
    return undefined;
  }
}

/** Polls `probe` until it returns a value or `timeoutMs` passes (then undefined). */
async function poll<T>(
  probe: () => Promise<T | undefined>,
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

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

// --- the scenario ------------------------------------------------------------------------------------

function dataRecord(partition: number, offset: number): { key: Buffer; value: Buffer } {
  return {
    key: Buffer.from(`key-${partition}-${offset}`),
    value: Buffer.from(`value-${partition}-${offset}-${'x'.repeat(64)}`),
  };
}

/**
 * Fills every data partition with RECORDS_PER_PARTITION records, DATA_BATCH_RECORDS to a record batch.
 * Batch size matters: an anchor lookup gets whole batches back from the broker.
 */
async function seedDataTopic(producer: Producer, topic: string): Promise<void> {
  const base = Date.now() - 3_600_000;
  for (let first = 0; first < RECORDS_PER_PARTITION; first += DATA_BATCH_RECORDS) {
    const count = Math.min(DATA_BATCH_RECORDS, RECORDS_PER_PARTITION - first);
    // One send carries one batch per partition.
    await producer.send({
      topic,
      acks: -1,
      messages: Array.from({ length: DATA_PARTITIONS }, (_, p) =>
        Array.from({ length: count }, (_, i) => ({
          partition: p,
          ...dataRecord(p, first + i),
          timestamp: String(base + first + i),
        })),
      ).flat(),
    });
  }
}

/** Waits until the collector process has joined its group on the offsets topic. */
async function waitUntilReading(collector: ServiceProcess, topic: string): Promise<void> {
  const joined = await poll(
    async () => {
      if (!collector.running()) throw new Error(`the collector exited early; see ${collector.logFile}`);
      const log = await collector.log();
      return log.includes(`reading ${topic} as a member of`) ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  );
  if (joined === undefined)
    throw new Error(`the collector did not join its group within 60 s; see ${collector.logFile}`);
}

interface WriteResult {
  written: number;
  firstWriteAt: number;
  lastWriteAt: number;
}

/**
 * Writes RATE commits per second for SECONDS: each send carries whatever fell due since the last one
 * (whole-group commits), and the next starts once the broker acknowledged it, so a slow send makes the
 * next one bigger rather than the rate lower.
 */
async function writeCommits(
  producer: Producer,
  workload: CommitWorkload,
  topic: string,
  onSent: (written: number) => void,
): Promise<WriteResult> {
  const total = Math.round(RATE * SECONDS);
  const start = performance.now();
  let written = 0;
  let lastWriteAt = start;
  while (written < total) {
    const elapsedMs = performance.now() - start;
    const due = Math.min(total, Math.floor((RATE * elapsedMs) / 1000)) - written;
    if (due <= 0 && written > 0) {
      await sleep(MIN_SEND_INTERVAL_MS);
      continue;
    }
    const records = workload.next(Math.max(1, due), Date.now());
    const sentAt = performance.now();
    await producer.sendBatch({
      acks: -1,
      topicMessages: [
        {
          topic,
          messages: records.map((r) => ({ partition: r.partition, key: r.key, value: r.value })),
        },
      ],
    });
    written += records.length;
    lastWriteAt = performance.now();
    onSent(written);
    const wait = MIN_SEND_INTERVAL_MS - (lastWriteAt - sentAt);
    if (wait > 0 && written < total) await sleep(wait);
  }
  return { written, firstWriteAt: start, lastWriteAt };
}

interface SampleResult {
  correct: number;
  checked: number;
  failures: string[];
}

/** Compares the last event of random group partitions with the last commit written for them. */
async function checkSample(
  jsm: JetStreamManager,
  names: Names,
  workload: CommitWorkload,
): Promise<SampleResult> {
  const random = seededRandom(4242);
  const chosen = new Set<number>();
  const committed = workload.committedGroupPartitions();
  while (chosen.size < Math.min(SAMPLE_SIZE, committed)) {
    const index = Math.floor(random() * workload.size);
    if (workload.last(index) !== undefined) chosen.add(index);
  }
  const stream = names.stream('committed');
  const failures: string[] = [];
  for (const index of chosen) {
    const last = workload.last(index);
    if (last === undefined) continue;
    const subject = names.committed(SOURCE, last);
    let event: OffsetCommitted;
    try {
      event = OffsetCommitted.decode((await jsm.streams.getMessage(stream, { last_by_subj: subject })).data);
    } catch (error: unknown) {
      failures.push(`${subject}: no event (${String(error)})`);
      continue;
    }
    const before = dataRecord(last.partition, last.offset - 1);
    const atLogEnd = last.offset >= RECORDS_PER_PARTITION;
    const expectedStatus = atLogEnd
      ? AnchorStatus.ANCHOR_STATUS_LOG_END
      : AnchorStatus.ANCHOR_STATUS_RESOLVED;
    const problems = [
      event.committedOffset !== last.offset && `offset ${event.committedOffset}, wrote ${last.offset}`,
      event.commitTimestampMs !== last.commitTimestampMs &&
        `commit time ${event.commitTimestampMs}, wrote ${last.commitTimestampMs}`,
      event.lastConsumed?.offset !== last.offset - 1 && `last consumed at ${event.lastConsumed?.offset}`,
      event.lastConsumed?.fingerprint !== recordFingerprint(before.key, before.value) &&
        'last consumed fingerprint differs from the record written there',
      event.anchorStatus !== expectedStatus &&
        `status ${AnchorStatus[event.anchorStatus]} (${event.anchorDetail})`,
      !atLogEnd && event.nextRecord?.offset !== last.offset && `next record at ${event.nextRecord?.offset}`,
    ].filter((problem): problem is string => typeof problem === 'string');
    if (problems.length > 0) failures.push(`${subject}: ${problems.join('; ')}`);
  }
  return { correct: chosen.size - failures.length, checked: chosen.size, failures };
}

async function run(): Promise<number> {
  const suffix = randomBytes(4).toString('hex');
  const dataTopic = `bench-data-${suffix}`;
  const offsetsTopic = `bench-offsets-${suffix}`;
  const consumerGroup = `bench-collector-${suffix}`;
  const names = new Names(`bench_${suffix}`);
  // Everything shares this machine's cores; other work running at the same time skews the result.
  const loadAtStart = loadavg()[0] ?? 0;
  say(`${cpus().length} cores, load average ${loadAtStart.toFixed(2)}`);
  say(
    `${RATE} commits/s for ${SECONDS} s over ${GROUPS * DATA_PARTITIONS} group partitions ` +
      `(${GROUPS} groups x ${DATA_PARTITIONS} partitions), coalescing window ${COALESCE_WINDOW_MS} ms`,
  );

  const testbedStart = acquireTestbed({ log: (line) => say(`test bed: ${line}`) });
  cleanup.push('stopping the test bed', async () => {
    const testbed = await testbedStart.catch(() => undefined);
    if (testbed === undefined) return;
    const kept = await releaseTestbed(testbed, { keepLogs: cleanup.failed && !interrupted() });
    if (kept !== undefined) say(`server logs kept in ${kept}`);
  });
  const testbed: AcquiredTestbed = await testbedStart;
  const { source, nats } = testbed.info;

  const kafka = new Kafka({
    clientId: 'offsetsync-bench',
    brokers: [source.bootstrapServers],
    logLevel: logLevel.ERROR,
    // stdout is for progress and the result; kafkajs' complaints (retried by itself) go to stderr.
    logCreator:
      () =>
      ({ log }) =>
        console.error(`collector: kafkajs: ${log.message} ${String(log.error ?? '')}`),
  });
  const admin = kafka.admin();
  await admin.connect();
  cleanup.push('disconnecting the admin client', () => admin.disconnect());
  // Idempotent, so a send retried after a leader change (right after topic creation) adds no duplicates.
  const producer = kafka.producer({
    allowAutoTopicCreation: false,
    idempotent: true,
    maxInFlightRequests: 1,
  });
  await producer.connect();
  cleanup.push('disconnecting the producer', () => producer.disconnect());
  const adapter = new KafkaAdapter({
    cluster: {
      bootstrapServers: [source.bootstrapServers],
      connectionTimeoutMs: 3_000,
      requestTimeoutMs: 10_000,
    },
    clientId: 'offsetsync-bench',
    logger: pino({ level: 'silent' }),
  });
  cleanup.push('disconnecting the Kafka adapter', () => adapter.disconnect());
  const nc = await connect({ servers: nats.url });
  cleanup.push('closing the NATS connection', () => nc.close());
  const jsm = await nc.jetstreamManager();

  if (!testbed.owned) {
    // A shared test bed outlives the run: leave it as it was found.
    cleanup.push('removing the topics and streams of this run', async () => {
      await admin.deleteTopics({ topics: [dataTopic, offsetsTopic] }).catch(() => undefined);
      await admin.deleteGroups([consumerGroup]).catch(() => undefined);
      for (const kind of ['committed', 'translated', 'applied', 'heartbeats'] as const) {
        await jsm.streams.delete(names.stream(kind)).catch(() => false);
      }
    });
  }
  await admin.createTopics({
    topics: [
      { topic: dataTopic, numPartitions: DATA_PARTITIONS },
      { topic: offsetsTopic, numPartitions: OFFSETS_PARTITIONS },
    ],
    waitForLeaders: true,
  });
  await seedDataTopic(producer, dataTopic);
  const dataEnds = await endOffsets(adapter, dataTopic, DATA_PARTITIONS);
  if (dataEnds.some((end) => end !== RECORDS_PER_PARTITION))
    throw new Error(
      `the data topic should hold ${RECORDS_PER_PARTITION} records a partition: ${dataEnds.join(',')}`,
    );
  say(
    `data topic ${dataTopic}: ${DATA_PARTITIONS} partitions x ${RECORDS_PER_PARTITION} records, ` +
      `${DATA_BATCH_RECORDS} to a batch`,
  );

  const workload = new CommitWorkload({
    groups: GROUPS,
    dataTopic,
    dataPartitions: DATA_PARTITIONS,
    recordsPerPartition: RECORDS_PER_PARTITION,
    offsetsPartitions: OFFSETS_PARTITIONS,
    hotGroupShare: HOT_GROUP_SHARE,
    hotCommitShare: HOT_COMMIT_SHARE,
    seed: 848,
  });
  say(
    `offsets topic ${offsetsTopic}: groups per partition ${workload.groupsPerOffsetsPartition().join(',')}`,
  );

  const profileDir = join(REPO_ROOT, '.infra', 'profiles');
  const collector = await startBenchService(
    'collector',
    {
      instance: { id: INSTANCE_ID },
      clusters: {
        [SOURCE]: {
          bootstrapServers: [source.bootstrapServers],
          connectionTimeoutMs: '3s',
          requestTimeoutMs: '10s',
        },
      },
      nats: { servers: [nats.url], subjectPrefix: names.prefix },
      collector: {
        cluster: SOURCE,
        offsetsTopic,
        consumerGroup,
        fetchMaxWaitMs: `${COALESCE_WINDOW_MS}ms`,
      },
      heartbeat: { intervalMs: `${HEARTBEAT_INTERVAL_MS}ms` },
      telemetry: { prometheus: { enabled: false } },
      probes: { port: 0 },
      logging: { level: 'info' },
    },
    { nodeArgs: PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [] },
  );
  cleanup.push('stopping the collector', async () => {
    await collector.stop();
    if (cleanup.failed && !interrupted()) say(`collector config and log kept in ${collector.dir}`);
    else await rm(collector.dir, { recursive: true, force: true });
  });
  await waitUntilReading(collector, offsetsTopic);
  say(`collector pid ${collector.pid} reads ${offsetsTopic} as ${consumerGroup}; writing commits`);

  const rss = new RssSampler(collector.pid);
  rss.start(200);
  cleanup.push('stopping the memory sampler', () => Promise.resolve(rss.stop()));
  const pids = { collector: collector.pid, source_kafka: source.pid, nats: nats.pid };
  const cpuBefore = cpuSnapshot(pids);

  // Progress: one line a second while writing and catching up; the lag is sampled on every line.
  let written = 0;
  let writing = true;
  let lagPeak = 0;
  const started = performance.now();
  let previous = { at: started, written: 0, read: 0, cpu: cpuBefore.byProcess.collector ?? 0 };
  const reportProgress = async (): Promise<void> => {
    const position = {
      committed: await committedOffsets(adapter, consumerGroup, offsetsTopic),
      end: await endOffsets(adapter, offsetsTopic, OFFSETS_PARTITIONS),
    };
    const now = performance.now();
    const read = sum(position.committed);
    const lag = lagOf(position);
    lagPeak = Math.max(lagPeak, lag);
    const cpu = cpuSeconds(collector.pid) ?? previous.cpu;
    const seconds = (now - previous.at) / 1000;
    say(
      `${((now - started) / 1000).toFixed(1)} s  written ${written} (${Math.round((written - previous.written) / seconds)}/s)` +
        `  handled ${read} (${Math.round((read - previous.read) / seconds)}/s)  lag ${lag}` +
        `  rss ${Math.round(rss.sample() / 2 ** 20)} MB  cpu ${Math.round((100 * (cpu - previous.cpu)) / seconds)} %` +
        (writing ? '' : '  (writing done)'),
    );
    previous = { at: now, written, read, cpu };
  };
  let reporting = Promise.resolve();
  const reporter = setInterval(() => {
    reporting = reporting.then(reportProgress).catch((error: unknown) => say(`progress: ${String(error)}`));
  }, 1_000);
  cleanup.push('stopping the progress lines', () => Promise.resolve(clearInterval(reporter)));

  const result = await writeCommits(producer, workload, offsetsTopic, (n) => (written = n));
  writing = false;
  const finalEnd = await endOffsets(adapter, offsetsTopic, OFFSETS_PARTITIONS);
  if (sum(finalEnd) !== result.written)
    throw new Error(`the offsets topic holds ${sum(finalEnd)} records, ${result.written} were written`);
  const writeSeconds = (result.lastWriteAt - result.firstWriteAt) / 1000;
  say(
    `wrote ${result.written} commits in ${writeSeconds.toFixed(1)} s; waiting for the collector to catch up`,
  );

  const catchUpTimeoutMs = Math.max(60_000, SECONDS * 3_000);
  const caughtUpAt = await poll(
    async () => {
      if (!collector.running()) throw new Error(`the collector exited; see ${collector.logFile}`);
      const committed = await committedOffsets(adapter, consumerGroup, offsetsTopic);
      lagPeak = Math.max(lagPeak, lagOf({ committed, end: finalEnd }));
      return committed.every((offset, p) => offset >= (finalEnd[p] ?? 0)) ? performance.now() : undefined;
    },
    { timeoutMs: catchUpTimeoutMs, intervalMs: POLL_INTERVAL_MS },
  );
  const measuredEnd = caughtUpAt ?? performance.now();
  const cpuAfter = cpuSnapshot(pids);
  clearInterval(reporter);
  await reporting;
  rss.stop();
  const handledAtEnd = sum(await committedOffsets(adapter, consumerGroup, offsetsTopic));
  const seconds = (measuredEnd - result.firstWriteAt) / 1000;
  if (caughtUpAt === undefined)
    say(`the collector did not catch up within ${catchUpTimeoutMs / 1000} s of the last write`);
  else say(`caught up ${Math.round(caughtUpAt - result.lastWriteAt)} ms after the last write`);

  // The heartbeat lags by up to one interval: wait for one that counts every record written.
  const beat = await poll(
    async () => {
      const heartbeat = await lastHeartbeat(jsm, names);
      const counted = sum(Object.values(heartbeat?.progress?.eventsByOutcome ?? {}));
      return heartbeat !== undefined && counted >= handledAtEnd ? heartbeat : undefined;
    },
    { timeoutMs: 10 * HEARTBEAT_INTERVAL_MS, intervalMs: 100 },
  );
  const outcomes = beat?.progress?.eventsByOutcome ?? {};
  const published = outcomes.committed ?? 0;
  const coalesced = outcomes.superseded ?? 0;
  const counted = sum(Object.values(outcomes));
  const otherOutcomes = Object.entries(outcomes).filter(
    ([k, n]) => k !== 'committed' && k !== 'superseded' && n > 0,
  );
  if (otherOutcomes.length > 0)
    say(`unexpected outcomes: ${JSON.stringify(Object.fromEntries(otherOutcomes))}`);
  if (beat !== undefined && beat.problems.length > 0)
    say(`the collector reports problems: ${beat.problems.map((p) => `${p.code}: ${p.detail}`).join('; ')}`);

  const streamState = (await jsm.streams.info(names.stream('committed'))).state;
  const subjectsExpected = workload.committedGroupPartitions();
  if (streamState.num_subjects !== subjectsExpected || streamState.messages !== subjectsExpected)
    say(
      `state stream: ${streamState.messages} messages on ${streamState.num_subjects} subjects, ` +
        `expected one on each of ${subjectsExpected}`,
    );
  if (streamState.last_seq !== published)
    say(`state stream received ${streamState.last_seq} events, the heartbeat counts ${published} published`);

  const sample = await checkSample(jsm, names, workload);
  for (const failure of sample.failures.slice(0, 5)) say(`sample: ${failure}`);

  const exitCode = await collector.stop();
  if (exitCode !== 0) say(`the collector exited with code ${String(exitCode)}`);
  // kafkajs logs a response that came after its request timed out: an anchor lookup that gave up.
  const lateResponses = (await collector.log()).split('Response without match').length - 1;
  if (lateResponses > 0)
    say(`the collector's log has ${lateResponses} Kafka responses that came after their request timed out`);
  if (PROFILE) say(`collector CPU profile written to ${profileDir}`);

  const cpuByProcess = Object.fromEntries(
    Object.entries(cpuAfter.byProcess).map(([name, value]) => [
      name,
      round(value - (cpuBefore.byProcess[name] ?? 0), 2),
    ]),
  );
  const handled = caughtUpAt === undefined ? handledAtEnd : result.written;
  const commitsPerSec = Math.round(handled / seconds);
  const ok =
    caughtUpAt !== undefined &&
    commitsPerSec >= TARGET_COMMITS_PER_SEC &&
    sample.correct === sample.checked &&
    streamState.messages === subjectsExpected;
  if (commitsPerSec < TARGET_COMMITS_PER_SEC) say(`below the target of ${TARGET_COMMITS_PER_SEC} commits/s`);
  console.log(
    JSON.stringify({
      bench: 'collector',
      commits_per_sec: commitsPerSec,
      group_partitions: workload.size,
      commits_written: result.written,
      commits_handled: handled,
      events_published: published,
      coalesced,
      coalescing_ratio: round(counted === 0 ? 0 : coalesced / counted, 4),
      seconds: round(seconds, 3),
      write_rate: Math.round(result.written / writeSeconds),
      target_rate: RATE,
      caught_up: caughtUpAt !== undefined,
      caught_up_ms_after_last_write:
        caughtUpAt === undefined ? null : Math.round(caughtUpAt - result.lastWriteAt),
      lag_peak: lagPeak,
      late_kafka_responses: lateResponses,
      rss_peak_mb: round(rss.peakBytes / 2 ** 20, 1),
      cpu_seconds: cpuByProcess.collector ?? 0,
      cpu_seconds_by_process: cpuByProcess,
      cores: cpus().length,
      load_avg_at_start: round(loadAtStart, 2),
      machine_cores_busy: round((cpuAfter.machine - cpuBefore.machine) / seconds, 2),
      sample_correct: `${sample.correct}/${sample.checked}`,
      state_subjects: streamState.num_subjects,
      coalesce_window_ms: COALESCE_WINDOW_MS,
      data_batch_records: DATA_BATCH_RECORDS,
      node: process.version,
    }),
  );
  cleanup.failed = !ok;
  return ok ? 0 : 1;
}

try {
  process.exitCode = await run();
} catch (error: unknown) {
  if (!interrupted()) console.error(error);
  process.exitCode = 1;
} finally {
  await cleanup.run();
}
