// A stand-in for MirrorMaker 2 with an identity replication policy, for end-to-end tests and benchmarks:
// it copies the committed records of one topic on the source cluster to the topic of the same name on the
// target cluster, partition p to partition p, keeping key, value, headers and timestamp. Tests steer it
// (start late, pause, hold records back, write duplicates the way a replicator does after a crash) and
// read back which target offset each source record landed at, which is what "replayed" and "skipped"
// records are computed from.
import kafkajs, { type IHeaders, type Message, type Producer } from 'kafkajs';
import { isRetryable } from '@offsetsync/contracts';
import { KafkaAdapter, type FetchAnswer, type FetchedRecord, type IsolationLevel } from '@offsetsync/kafka';
import { createLogger, type KafkaClusterConfig, type Logger } from '@offsetsync/runtime';
import type { KafkaClientCredentials } from '@offsetsync/testbed';

const { ConfigResourceTypes } = kafkajs;

/** How to reach a cluster; the test bed's `source` and `target` fit. */
interface ReplicatorCluster {
  bootstrapServers: string;
  /**
   * Log in over SASL_SSL (SCRAM-SHA-512) with these, as on the secured test bed (`bedKafkaCredentials`).
   * Default: unset, plaintext without a login.
   */
  security?: KafkaClientCredentials;
}

/** A source record as the replicator sees it. */
export interface SourceRecord extends FetchedRecord {
  partition: number;
}

/**
 * Where copying stops: per source partition the first offset not to copy (partitions not named are not
 * limited), or a predicate that is true for the first record not to copy (it and every later record of
 * its partition are held back).
 */
export type CopyLimit = Readonly<Record<number, number>> | ((record: SourceRecord) => boolean);

/** Random duplicates, reproducible from the seed. */
interface RandomDuplicates {
  /**
   * Chance, per write batch, that a suffix of the batch (from one record up to the whole batch, uniformly)
   * is written a second time right after it, as a replicator does when it restarts from the last source
   * offset it had committed. 0 to 1.
   */
  probability: number;
  /** Seed of the pseudo-random sequence; the same seed and the same batches give the same duplicates. */
  seed: number;
  /**
   * When set, the run written again is the last 1 to `maxRunLength` records copied (uniformly), across
   * write batches, instead of a suffix of the batch; and restarts (below) go back as far. Default: unset.
   */
  maxRunLength?: number;
  /**
   * Chance, per write batch, that the replicator restarts from an older position (1 to `maxRunLength`
   * records back, as MirrorMaker 2 does from its last committed source offsets after a task restart):
   * everything from there is copied again. Needs `maxRunLength`. 0 to 1. Default: `0`.
   */
  restartProbability?: number;
}

/** Options of {@link TestReplicator}. */
export interface ReplicatorOptions {
  source: ReplicatorCluster;
  target: ReplicatorCluster;
  /** The topic copied; the target topic has the same name. */
  topic: string;
  /**
   * Where each partition starts: `'earliest'` (log start offset), `'latest'` (last stable offset) or an
   * offset per partition (partitions not named start at the earliest). Default: `'earliest'`.
   */
  from?: 'earliest' | 'latest' | Readonly<Record<number, number>>;
  /** Create the target topic, with the source's partition count, when it does not exist. Default: `true`. */
  createTopic?: boolean;
  /**
   * Configs the target topic is created with (for example `message.timestamp.type: LogAppendTime`). When
   * the topic exists already, start fails unless it has these values. Default: none.
   */
  targetTopicConfigs?: Readonly<Record<string, string>>;
  /** Copy only up to this limit until {@link TestReplicator.copyUntil} changes it. Default: no limit. */
  copyUntil?: CopyLimit;
  /** Start paused: nothing is copied before {@link TestReplicator.resume}. Default: `false`. */
  startPaused?: boolean;
  /** Write some records twice at random. Default: none. */
  duplicates?: RandomDuplicates;
  /**
   * Source offsets per partition whose record is written a second time immediately after itself (the
   * write batch ends there), so the two copies are adjacent on the target. Each applies once. Default: none.
   */
  duplicateOffsets?: Readonly<Record<number, readonly number[]>>;
  /** At most this many records per produce request (write batch). Default: `50`. */
  maxBatchRecords?: number;
  /** How long one fetch waits on the broker for new records. Default: `100`. */
  fetchMaxWaitMs?: number;
  /** How long retryable source errors are retried before the replicator fails. Default: `30000`. */
  retryForMs?: number;
  /** Logger of the replicator's Kafka clients. Default: silent. */
  logger?: Logger;
}

/** One copy of a source record written to the target. */
export interface CopyEntry {
  partition: number;
  sourceOffset: number;
  targetOffset: number;
  /** 0 for the first copy of the source record, 1 for its first duplicate, and so on. */
  copy: number;
}

/** What has been copied from one source partition. */
export interface PartitionProgress {
  partition: number;
  /** The next source offset to copy. */
  nextOffset: number;
  /** Source records copied at least once. */
  copied: number;
  /** Copies written beyond the first of each source record. */
  duplicates: number;
  /** Restarts from an older position (duplicates.restartProbability). */
  restarts: number;
  /** Whether the copy limit holds this partition back. */
  held: boolean;
}

interface PartitionState {
  partition: number;
  next: number;
  /** A predicate limit stopped this partition at `next`; cleared when the limit changes. */
  heldByPredicate: boolean;
  copied: number;
  duplicates: number;
  targetsOf: Map<number, number[]>;
  sourceOf: Map<number, number>;
  pendingDuplicates: Set<number>;
  /** Restarts from an older position so far. */
  restarts: number;
  /** The records copied, in source order (up to maxRunLength of them): where runs and restarts reach. */
  history: SourceRecord[];
}

type StepOutcome = 'done' | 'retry';

const RETRY_BACKOFF_MS = 200;
const WAIT_POLL_MS = 50;

/**
 * Copies one topic from the source cluster to the target cluster, reading only committed records. Target
 * writes use an idempotent producer with one request in flight, so a produce retry cannot add an
 * unrecorded copy and each write batch lands at consecutive offsets from the base offset the broker
 * returns: that is how every copy's target offset is known.
 */
export class TestReplicator {
  private readonly options: ReplicatorOptions;
  private readonly source: KafkaAdapter;
  private readonly target: KafkaAdapter;
  private readonly maxBatchRecords: number;
  private readonly random: (() => number) | undefined;
  private states: PartitionState[] = [];
  private readonly log: CopyEntry[] = [];
  private readonly rewinds = new Map<number, number>();
  private limit: CopyLimit | undefined;
  private paused: boolean;
  private stopping = false;
  private producer: Producer | undefined;
  private starting: Promise<void> | undefined;
  private stopped: Promise<void> | undefined;
  private loop: Promise<void> | undefined;
  private inFlight: Promise<StepOutcome> | undefined;
  private wakeUp: (() => void) | undefined;
  private failingSince: number | undefined;
  private failed: { error: unknown } | undefined;

  constructor(options: ReplicatorOptions) {
    const problems = optionProblems(options);
    if (problems.length > 0) throw new Error(`invalid replicator options: ${problems.join('; ')}`);
    this.options = options;
    this.maxBatchRecords = options.maxBatchRecords ?? 50;
    this.random = options.duplicates === undefined ? undefined : mulberry32(options.duplicates.seed);
    this.limit = options.copyUntil;
    this.paused = options.startPaused ?? false;
    const logger =
      options.logger ??
      createLogger({ service: 'test-replicator', instanceId: options.topic, level: 'silent' });
    this.source = new KafkaAdapter({
      cluster: clusterConfig(options.source),
      clientId: 'test-replicator',
      logger,
    });
    this.target = new KafkaAdapter({
      cluster: clusterConfig(options.target),
      clientId: 'test-replicator',
      logger,
    });
  }

  /**
   * Connects, checks the source topic, prepares the target topic, resolves the start offsets and starts
   * copying (unless paused). Idempotent.
   */
  start(): Promise<void> {
    if (this.stopped) return Promise.reject(new Error('the replicator was stopped'));
    this.starting ??= this.doStart();
    return this.starting;
  }

  /**
   * Stops copying once the write batch in progress has been written, and resolves when it has: no write
   * happens after that until {@link resume}.
   */
  async pause(): Promise<void> {
    this.paused = true;
    this.signal();
    try {
      await this.inFlight;
    } catch {
      // The loop keeps its failure in `failure`; pausing a failed replicator is not an error.
    }
  }

  /** Copies again after {@link pause} (or `startPaused`). */
  resume(): void {
    this.paused = false;
    this.signal();
  }

  /** Replaces the copy limit; records held back so far are copied when the new limit allows. */
  copyUntil(limit: CopyLimit): void {
    this.limit = limit;
    for (const state of this.states) state.heldByPredicate = false;
    this.signal();
  }

  /** Removes the copy limit. */
  copyAll(): void {
    this.limit = undefined;
    for (const state of this.states) state.heldByPredicate = false;
    this.signal();
  }

  /**
   * Moves partitions back to the given source offsets before the next fetch, as a replicator restarting
   * from older committed source offsets does: the records from there on are copied again, as duplicates.
   */
  rewind(offsets: Readonly<Record<number, number>>): void {
    for (const [key, offset] of Object.entries(offsets)) {
      const partition = Number(key);
      if (!isOffset(offset)) throw new Error(`rewind: invalid offset ${offset} for partition ${partition}`);
      if (this.states.length > 0 && this.states[partition] === undefined) {
        throw new Error(`rewind: topic ${this.options.topic} has no partition ${partition}`);
      }
      this.rewinds.set(partition, offset);
    }
    this.signal();
  }

  /** Per source partition: next offset to copy and counts copied. Empty before start. */
  progress(): PartitionProgress[] {
    return this.states.map((s) => ({
      partition: s.partition,
      nextOffset: s.next,
      copied: s.copied,
      duplicates: s.duplicates,
      restarts: s.restarts,
      held: this.isHeld(s),
    }));
  }

  /** Every copy written, in the order written (per partition that is target offset order). */
  copies(partition?: number): CopyEntry[] {
    return this.log
      .filter((e) => partition === undefined || e.partition === partition)
      .map((e) => ({ ...e }));
  }

  /** Target offsets of every copy of a source record, ascending; empty when it was not copied. */
  targetOffsetsOf(partition: number, sourceOffset: number): number[] {
    return [...(this.states[partition]?.targetsOf.get(sourceOffset) ?? [])];
  }

  /** The source offset of the record copied to a target offset, when the replicator wrote it. */
  sourceOffsetOf(partition: number, targetOffset: number): number | undefined {
    return this.states[partition]?.sourceOf.get(targetOffset);
  }

  /** The error that stopped copying, if any. */
  get failure(): unknown {
    return this.failed?.error;
  }

  /**
   * Resolves when every partition has copied everything the source held (up to its last stable offset)
   * when this was called, or is held back at its copy limit. Rejects when the replicator failed or
   * stopped, or after `timeoutMs`.
   */
  async waitUntilCaughtUp(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    await this.start();
    const answers = await this.source.listOffsets(
      this.states.map((s) => ({ topic: this.options.topic, partition: s.partition, timestamp: 'latest' })),
      { isolation: 'read_committed' },
    );
    const ends = answers.map((a) => {
      if (a.error) throw a.error;
      return a.offset;
    });
    for (;;) {
      if (this.failed) throw new Error('the replicator failed', { cause: this.failed.error });
      const lagging = this.states.filter((s) => s.next < ends[s.partition]! && !this.isHeld(s));
      if (lagging.length === 0) return;
      if (this.stopping) throw new Error('the replicator was stopped before it caught up');
      if (Date.now() >= deadline) {
        const behind = lagging.map((s) => `${s.partition}: ${s.next} < ${ends[s.partition]}`).join(', ');
        throw new Error(
          `replicator of ${this.options.topic} not caught up after ${timeoutMs} ms` +
            `${this.paused ? ' (paused)' : ''}: ${behind}`,
        );
      }
      await delay(WAIT_POLL_MS);
    }
  }

  /**
   * Stops copying after the write batch in progress and closes every connection. Runs once; every caller
   * gets the same promise. A failure of the copy loop is not rethrown here (see {@link failure}).
   */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.stopping = true;
      this.signal();
      try {
        await this.starting;
      } catch {
        // A failed start left only connections, closed below.
      }
      await this.loop;
      await this.producer?.disconnect();
      await Promise.all([this.source.disconnect(), this.target.disconnect()]);
    })();
    return this.stopped;
  }

  private async doStart(): Promise<void> {
    const { topic } = this.options;
    await Promise.all([this.source.connect(), this.target.connect()]);
    const count = (await this.source.partitionCounts([topic])).get(topic);
    if (count === undefined) throw new Error(`source topic ${topic} does not exist`);
    await this.prepareTargetTopic(count);
    const starts = await this.startOffsets(count);
    this.states = starts.map((next, partition) => ({
      partition,
      next,
      heldByPredicate: false,
      copied: 0,
      duplicates: 0,
      targetsOf: new Map(),
      sourceOf: new Map(),
      pendingDuplicates: new Set(this.options.duplicateOffsets?.[partition] ?? []),
      restarts: 0,
      history: [],
    }));
    this.producer = this.target.kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      // kafkajs retries an idempotent producer forever by default; a test wants a failure instead.
      retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 2_000 },
    });
    await this.producer.connect();
    if (this.stopping) return;
    this.loop = this.run();
  }

  private async prepareTargetTopic(sourcePartitions: number): Promise<void> {
    const { topic, targetTopicConfigs = {} } = this.options;
    const existing = (await this.target.partitionCounts([topic])).get(topic);
    const admin = this.target.kafka.admin();
    await admin.connect();
    try {
      if (existing === undefined) {
        if (this.options.createTopic === false) throw new Error(`target topic ${topic} does not exist`);
        await admin.createTopics({
          topics: [
            {
              topic,
              numPartitions: sourcePartitions,
              configEntries: Object.entries(targetTopicConfigs).map(([name, value]) => ({ name, value })),
            },
          ],
          waitForLeaders: true,
        });
        return;
      }
      if (existing < sourcePartitions) {
        throw new Error(
          `target topic ${topic} has ${existing} partitions, fewer than the source's ${sourcePartitions}`,
        );
      }
      const configNames = Object.keys(targetTopicConfigs);
      if (configNames.length === 0) return;
      const described = await admin.describeConfigs({
        resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames }],
        includeSynonyms: false,
      });
      const actual = new Map(
        (described.resources[0]?.configEntries ?? []).map((e) => [e.configName, e.configValue]),
      );
      const mismatches = configNames
        .filter((name) => actual.get(name) !== targetTopicConfigs[name])
        .map((name) => `${name}=${actual.get(name)} (wanted ${targetTopicConfigs[name]})`);
      if (mismatches.length > 0) {
        throw new Error(`target topic ${topic} exists with other configs: ${mismatches.join(', ')}`);
      }
    } finally {
      await admin.disconnect();
    }
  }

  private async startOffsets(count: number): Promise<number[]> {
    const { topic, from = 'earliest' } = this.options;
    const partitions = Array.from({ length: count }, (_, p) => p);
    if (typeof from === 'object') {
      for (const key of Object.keys(from)) {
        if (Number(key) >= count) throw new Error(`from: topic ${topic} has no partition ${key}`);
      }
    }
    const answers = await this.source.listOffsets(
      partitions.map((partition) => ({
        topic,
        partition,
        timestamp: from === 'latest' ? ('latest' as const) : ('earliest' as const),
      })),
      { isolation: 'read_committed' },
    );
    return answers.map((a, partition) => {
      if (a.error) throw a.error;
      return typeof from === 'object' ? (from[partition] ?? a.offset) : a.offset;
    });
  }

  private async run(): Promise<void> {
    try {
      while (!this.stopping) {
        if (this.paused || this.states.every((s) => this.isHeld(s) && !this.rewinds.has(s.partition))) {
          await this.sleep();
          continue;
        }
        this.inFlight = this.step();
        if ((await this.inFlight) === 'retry') await this.sleep(RETRY_BACKOFF_MS);
      }
    } catch (error: unknown) {
      this.failed = { error };
    }
  }

  /** One fetch of every partition not held back, and the copies of what it returned. */
  private async step(): Promise<StepOutcome> {
    for (const [partition, offset] of this.rewinds) {
      const state = this.states[partition]!;
      state.next = offset;
      state.heldByPredicate = false;
    }
    this.rewinds.clear();
    const wanted = this.states.filter((s) => !this.isHeld(s));
    if (wanted.length === 0) return 'done';
    let answers: FetchAnswer[];
    try {
      answers = await this.source.fetchRecords(
        wanted.map((s) => ({ topic: this.options.topic, partition: s.partition, offset: s.next })),
        { isolation: 'read_committed', maxWaitMs: this.options.fetchMaxWaitMs ?? 100 },
      );
    } catch (error: unknown) {
      return this.retryOrThrow(error);
    }
    let outcome: StepOutcome = 'done';
    for (const answer of answers) {
      if (answer.error) {
        outcome = this.retryOrThrow(answer.error);
        continue;
      }
      await this.copyAnswer(this.states[answer.partition]!, answer);
    }
    if (outcome === 'done') this.failingSince = undefined;
    return outcome;
  }

  private retryOrThrow(error: unknown): StepOutcome {
    if (!isRetryable(error)) throw error;
    const now = Date.now();
    this.failingSince ??= now;
    if (now - this.failingSince > (this.options.retryForMs ?? 30_000)) throw error;
    return 'retry';
  }

  /** Writes the fetched records of one partition in write batches, honouring limit, pause and stop. */
  private async copyAnswer(state: PartitionState, answer: FetchAnswer): Promise<void> {
    const records = answer.records.map((r): SourceRecord => ({ ...r, partition: state.partition }));
    let index = 0;
    while (index < records.length) {
      // Checked between write batches: a pause or stop takes effect after the batch in progress.
      if (this.paused || this.stopping || this.rewinds.has(state.partition)) return;
      const limit = this.limit;
      const offsetLimit = typeof limit === 'object' ? limit[state.partition] : undefined;
      const batch: SourceRecord[] = [];
      let heldAt: number | undefined;
      while (index < records.length && batch.length < this.maxBatchRecords) {
        const record = records[index]!;
        if (offsetLimit !== undefined && record.offset >= offsetLimit) {
          heldAt = offsetLimit;
          break;
        }
        if (typeof limit === 'function' && limit(record)) {
          heldAt = record.offset;
          state.heldByPredicate = true;
          break;
        }
        batch.push(record);
        index += 1;
        if (state.pendingDuplicates.has(record.offset)) break;
      }
      if (batch.length > 0) await this.writeBatch(state, batch);
      if (heldAt !== undefined) {
        state.next = Math.max(state.next, heldAt);
        return;
      }
    }
    // Past the last data record there may be control or aborted batches; step over them, but not past a
    // limit, so that progress reports the limit once it is reached.
    const offsetLimit = typeof this.limit === 'object' ? this.limit[state.partition] : undefined;
    const next = offsetLimit === undefined ? answer.nextOffset : Math.min(answer.nextOffset, offsetLimit);
    state.next = Math.max(state.next, next);
  }

  private async writeBatch(state: PartitionState, batch: readonly SourceRecord[]): Promise<void> {
    await this.send(state, batch);
    const last = batch[batch.length - 1]!;
    state.next = last.offset + 1;
    if (state.pendingDuplicates.delete(last.offset)) await this.send(state, [last]);
    const duplicates = this.options.duplicates;
    const random = this.random;
    if (duplicates === undefined || random === undefined) return;
    const maxRun = duplicates.maxRunLength;
    if (maxRun !== undefined) {
      state.history.push(...batch);
      if (state.history.length > maxRun) state.history.splice(0, state.history.length - maxRun);
    }
    const runLength = (available: number) =>
      1 + Math.floor(random() * Math.min(maxRun ?? available, available));
    if (random() < duplicates.probability) {
      const run =
        maxRun === undefined
          ? batch.slice(Math.floor(random() * batch.length))
          : state.history.slice(-runLength(state.history.length));
      await this.send(state, run);
    }
    if (maxRun !== undefined && random() < (duplicates.restartProbability ?? 0)) {
      // Restart from an older position: the next fetch starts there, and what follows is copied again.
      const from = state.history[state.history.length - runLength(state.history.length)]!;
      state.history.splice(state.history.indexOf(from));
      this.rewinds.set(state.partition, from.offset);
      state.restarts += 1;
    }
  }

  /** One produce request to the partition; its records land at consecutive offsets from the base offset. */
  private async send(state: PartitionState, records: readonly SourceRecord[]): Promise<void> {
    const metadata = await this.producer!.send({
      topic: this.options.topic,
      acks: -1,
      messages: records.map(toMessage),
    });
    const answer = metadata.find((m) => m.partition === state.partition);
    if (answer?.baseOffset === undefined) {
      throw new Error(`no base offset in the produce response for partition ${state.partition}`);
    }
    const base = Number(answer.baseOffset);
    records.forEach((record, i) => {
      const targetOffset = base + i;
      const targets = state.targetsOf.get(record.offset) ?? [];
      const entry: CopyEntry = {
        partition: state.partition,
        sourceOffset: record.offset,
        targetOffset,
        copy: targets.length,
      };
      targets.push(targetOffset);
      state.targetsOf.set(record.offset, targets);
      state.sourceOf.set(targetOffset, record.offset);
      this.log.push(entry);
      if (entry.copy === 0) state.copied += 1;
      else state.duplicates += 1;
    });
  }

  private isHeld(state: PartitionState): boolean {
    const limit = this.limit;
    if (limit === undefined) return false;
    if (typeof limit === 'function') return state.heldByPredicate;
    const offsetLimit = limit[state.partition];
    return offsetLimit !== undefined && state.next >= offsetLimit;
  }

  /** Waits for pause, resume, a limit change, a rewind or stop; or for `ms` when given. */
  private sleep(ms?: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = ms === undefined ? undefined : setTimeout(() => done(), ms);
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        resolve();
      };
      this.wakeUp = done;
    });
  }

  private signal(): void {
    this.wakeUp?.();
  }
}

/**
 * Every data record of a partition from its log start to its end when called (the last stable offset
 * under read_committed, the high watermark under read_uncommitted), in offset order.
 */
export async function readPartition(
  adapter: KafkaAdapter,
  topic: string,
  partition: number,
  options: { isolation?: IsolationLevel } = {},
): Promise<FetchedRecord[]> {
  const isolation = options.isolation ?? 'read_committed';
  const [start, end] = await adapter.listOffsets(
    [
      { topic, partition, timestamp: 'earliest' },
      { topic, partition, timestamp: 'latest' },
    ],
    { isolation },
  );
  if (start?.error) throw start.error;
  if (end?.error) throw end.error;
  const records: FetchedRecord[] = [];
  let next = start!.offset;
  while (next < end!.offset) {
    const [answer] = await adapter.fetchRecords([{ topic, partition, offset: next }], { isolation });
    if (answer?.error) throw answer.error;
    if (answer === undefined || answer.nextOffset <= next) {
      throw new Error(`reading ${topic}-${partition} made no progress at offset ${next}`);
    }
    records.push(...answer.records.filter((r) => r.offset < end!.offset));
    next = answer.nextOffset;
  }
  return records;
}

function toMessage(record: SourceRecord): Message {
  const headers: IHeaders = {};
  for (const [key, value] of Object.entries(record.headers)) {
    const values = Array.isArray(value) ? value : [value];
    const buffers = values.filter((v): v is Buffer => v !== null);
    // kafkajs fails on null header values (it measures them with Buffer.byteLength).
    if (buffers.length !== values.length) {
      throw new Error(
        `record ${record.partition}@${record.offset} has a null value for header ${key}, which kafkajs cannot write`,
      );
    }
    headers[key] = Array.isArray(value) ? buffers : buffers[0];
  }
  return {
    partition: record.partition,
    key: record.key,
    value: record.value,
    timestamp: String(record.timestampMs),
    headers,
  };
}

function clusterConfig(cluster: ReplicatorCluster): KafkaClusterConfig {
  const config: KafkaClusterConfig = {
    bootstrapServers: [cluster.bootstrapServers],
    connectionTimeoutMs: 3_000,
    requestTimeoutMs: 10_000,
  };
  const { security } = cluster;
  if (security === undefined) return config;
  return {
    ...config,
    tls: { enabled: true, caFile: security.caFile, rejectUnauthorized: true },
    sasl: { mechanism: 'scram-sha-512', username: security.username, password: security.password },
  };
}

function optionProblems(options: ReplicatorOptions): string[] {
  const problems: string[] = [];
  if (options.topic === '') problems.push('topic is empty');
  const { duplicates, maxBatchRecords, duplicateOffsets, from } = options;
  if (duplicates !== undefined) {
    if (!(duplicates.probability >= 0 && duplicates.probability <= 1)) {
      problems.push(`duplicates.probability ${duplicates.probability} is not within 0..1`);
    }
    if (!Number.isSafeInteger(duplicates.seed))
      problems.push(`duplicates.seed ${duplicates.seed} is not an integer`);
    const { maxRunLength, restartProbability } = duplicates;
    if (maxRunLength !== undefined && !(Number.isSafeInteger(maxRunLength) && maxRunLength >= 1))
      problems.push(`duplicates.maxRunLength ${maxRunLength} is not a positive integer`);
    if (restartProbability !== undefined) {
      if (!(restartProbability >= 0 && restartProbability <= 1))
        problems.push(`duplicates.restartProbability ${restartProbability} is not within 0..1`);
      if (maxRunLength === undefined)
        problems.push('duplicates.restartProbability needs duplicates.maxRunLength');
    }
  }
  if (maxBatchRecords !== undefined && !(Number.isSafeInteger(maxBatchRecords) && maxBatchRecords > 0)) {
    problems.push(`maxBatchRecords ${maxBatchRecords} is not a positive integer`);
  }
  for (const [partition, offsets] of Object.entries(duplicateOffsets ?? {})) {
    for (const offset of offsets) {
      if (!isOffset(offset)) problems.push(`duplicateOffsets[${partition}] has invalid offset ${offset}`);
    }
  }
  if (typeof from === 'object') {
    for (const [partition, offset] of Object.entries(from)) {
      if (!isOffset(offset)) problems.push(`from[${partition}] is invalid: ${offset}`);
    }
  }
  return problems;
}

function isOffset(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 0;
}

/** A small seeded PRNG (mulberry32): uniform in [0, 1). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
