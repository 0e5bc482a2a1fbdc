// `offsetsync sandbox`: everything on one machine. Two Kafka clusters and NATS (the test bed), MirrorMaker 2
// copying a demo topic from source to target, the four offsetsync services as their own processes, and a
// demo consumer group that consumes part of the topic on the source and then moves to the target.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import kafkajs, { type Admin, type Kafka as KafkaClient } from 'kafkajs';
import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import { stringify } from 'yaml';
import { ApplyOutcome, Names, OffsetApplied } from '@offsetsync/contracts';
import { ENV_PREFIX } from '@offsetsync/runtime';
import {
  ensureKafkaDistribution,
  freePort,
  GiveUp,
  isAlive,
  KAFKA_VERSION,
  spawnDetached,
  startMirrorMaker,
  startTestbed,
  stopMirrorMaker,
  stopProcess,
  stopTestbed,
  waitFor,
  type MirrorMakerInfo,
  type TestbedInfo,
} from '@offsetsync/testbed';
import { demoRecordId, demoRecords, demoStopOffsets } from './demo-workload.js';
import { startSandboxPrometheus, type SandboxPrometheus } from './sandbox-prometheus.js';
import { countMove, formatMoveLine, type MoveCount } from './move-report.js';

const { Kafka, logLevel } = kafkajs;

/** The four services, started in this order and stopped in the reverse one. */
const SANDBOX_ROLES = ['health', 'committer', 'translator', 'collector'] as const;
export type SandboxRole = (typeof SANDBOX_ROLES)[number];

/** What the sandbox runs; every field has a default. */
export interface SandboxOptions {
  /** Demo topic on the source, copied to the target by MirrorMaker. Default: `demo-orders`. */
  topic?: string;
  /** Demo consumer group moved from the source to the target. Default: `demo-app`. */
  group?: string;
  /** Partitions of the demo topic. Default: 3. */
  partitions?: number;
  /** Demo records written to each partition. Default: 2000. */
  recordsPerPartition?: number;
  /** How long one step may take before the sandbox gives up. Default: 180 000 ms. */
  stepTimeoutMs?: number;
  /**
   * Also run Debian's Prometheus (/usr/bin/prometheus) scraping the four services, with the chart's alert
   * rules. Default: false.
   */
  prometheus?: boolean;
}

/** One line of progress: what became ready, and when (milliseconds since the sandbox started). */
export type ProgressListener = (elapsedMs: number, text: string) => void;

/** A service process the sandbox started. */
export interface SandboxService {
  role: SandboxRole;
  pid: number;
  logFile: string;
  /** `host:port` of its Prometheus metrics, with the `prometheus` option. */
  metricsAddress?: string;
}

/** Where the running sandbox can be reached. */
export interface SandboxEndpoints {
  testbed: TestbedInfo;
  mirrorMaker: MirrorMakerInfo;
  services: readonly SandboxService[];
  configFile: string;
  healthAddress: string;
  subjectPrefix: string;
  /** The Prometheus scraping the services, with the `prometheus` option. */
  prometheus?: SandboxPrometheus;
}

const CLI_MAIN = fileURLToPath(new URL('../main.js', import.meta.url));
const SUBJECT_PREFIX = 'sandbox';

/**
 * The sandbox's lifecycle: {@link start} brings everything up step by step, {@link moveGroup} runs the
 * demo move, {@link stop} stops every process it started (by pid and process group), once.
 */
/** How many records of its own partition `partition` of the target holds before the copies. Pure. */
function sandboxOwnRecords(partition: number): number {
  return 100 + 37 * partition;
}

export class Sandbox {
  private readonly topic: string;
  private readonly group: string;
  private readonly partitions: number;
  private readonly perPartition: number;
  private readonly stepTimeoutMs: number;
  private readonly withPrometheus: boolean;
  private prometheusPid: number | undefined;
  private readonly began = Date.now();
  private readonly progress: ProgressListener;
  private testbed: TestbedInfo | undefined;
  private mirrorMaker: MirrorMakerInfo | undefined;
  private readonly services: SandboxService[] = [];
  private readonly closers: Array<() => Promise<void>> = [];
  private endpoints: SandboxEndpoints | undefined;
  private stopping: Promise<void> | undefined;
  /** The server launch in progress; stop() lets it finish, so that what it starts is stopped too. */
  private launching: Promise<unknown> | undefined;
  private failed = false;

  constructor(options: SandboxOptions, progress: ProgressListener) {
    this.topic = options.topic ?? 'demo-orders';
    this.group = options.group ?? 'demo-app';
    this.partitions = options.partitions ?? 3;
    this.perPartition = options.recordsPerPartition ?? 2_000;
    this.stepTimeoutMs = options.stepTimeoutMs ?? 180_000;
    this.withPrometheus = options.prometheus ?? false;
    this.progress = progress;
  }

  /** Pids of every process started so far (servers, MirrorMaker, services); each leads its own process group. */
  pids(): number[] {
    const t = this.testbed;
    return [
      ...(t ? [t.source.pid, t.target.pid, t.nats.pid] : []),
      ...(this.mirrorMaker ? [this.mirrorMaker.pid] : []),
      ...this.services.map((s) => s.pid),
      ...(this.prometheusPid === undefined ? [] : [this.prometheusPid]),
    ];
  }

  get isStopping(): boolean {
    return this.stopping !== undefined;
  }

  /** Starts everything and writes the demo records; resolves when the services and MirrorMaker run. */
  async start(): Promise<SandboxEndpoints> {
    try {
      return await this.doStart();
    } catch (error: unknown) {
      this.failed = true;
      throw error;
    }
  }

  private async doStart(): Promise<SandboxEndpoints> {
    const dist = await ensureKafkaDistribution();
    this.step(
      `Kafka ${KAFKA_VERSION} and MirrorMaker 2 jars ${dist.fetched ? 'fetched with Maven' : 'found in the cache'} (${dist.libDir})`,
    );
    this.checkNotStopping();
    const testbed = await this.launch(startTestbed().then((info) => (this.testbed = info)));
    this.step(
      `source Kafka ${testbed.source.bootstrapServers}, target Kafka ${testbed.target.bootstrapServers}, NATS ${testbed.nats.url}`,
    );

    const source = this.client(testbed.source.bootstrapServers);
    const target = this.client(testbed.target.bootstrapServers);
    const sourceAdmin = await this.admin(source);
    await sourceAdmin.createTopics({
      topics: [{ topic: this.topic, numPartitions: this.partitions }],
      waitForLeaders: true,
    });
    await this.writeDemoRecords(source);
    this.step(
      `demo topic ${this.topic} on the source: ${this.partitions} partitions x ${this.perPartition} records, 10 records per timestamp`,
    );

    // As after a real migration, the target holds records of its own before the copies: every copy
    // lands at another offset than its original, which only translation gets right.
    const targetAdmin = await this.admin(target);
    await targetAdmin.createTopics({
      topics: [{ topic: this.topic, numPartitions: this.partitions }],
      waitForLeaders: true,
    });
    await this.writeOwnTargetRecords(target);
    this.step(
      `the target's own records in ${this.topic} first: ${Array.from({ length: this.partitions }, (_, p) => sandboxOwnRecords(p)).join(', ')} per partition`,
    );

    this.checkNotStopping();
    const mirrorMakerStart = startMirrorMaker({
      dir: join(testbed.workDir, 'mirror-maker'),
      libDir: dist.libDir,
      sourceBootstrapServers: testbed.source.bootstrapServers,
      targetBootstrapServers: testbed.target.bootstrapServers,
      topics: [this.topic],
      instanceName: 'sandbox',
      readyTimeoutMs: this.stepTimeoutMs,
    });
    const mirrorMaker = await this.launch(mirrorMakerStart.then((info) => (this.mirrorMaker = info)));
    this.step(`MirrorMaker 2 started (pid ${mirrorMaker.pid}, ${mirrorMaker.propertiesFile})`);

    this.checkNotStopping();
    const healthPort = await freePort();
    const configFile = await this.writeServiceConfig(testbed, healthPort);
    for (const role of SANDBOX_ROLES)
      this.services.push(
        this.startService(
          role,
          configFile,
          this.withPrometheus ? `127.0.0.1:${await freePort()}` : undefined,
        ),
      );
    await this.waitForHeartbeats(testbed);
    this.step(
      `offsetsync ${SANDBOX_ROLES.join(', ')} running (pids ${this.services.map((s) => s.pid).join(', ')}; config ${configFile})`,
    );
    let prometheus: SandboxPrometheus | undefined;
    if (this.withPrometheus) {
      this.checkNotStopping();
      prometheus = await this.launch(
        startSandboxPrometheus({
          dir: join(testbed.workDir, 'prometheus'),
          targets: this.services.map((s) => ({ role: s.role, address: s.metricsAddress! })),
          readyTimeoutMs: this.stepTimeoutMs,
          started: (pid) => (this.prometheusPid = pid),
        }),
      );
      this.step(
        `Prometheus ${prometheus.address} scraping the four services with the chart's alert rules (pid ${prometheus.pid}, ${prometheus.configFile})`,
      );
    }

    await waitFor(
      `MirrorMaker to copy ${this.topic} to the target`,
      async () => {
        this.checkAlive();
        const [from, to] = await Promise.all([
          sourceAdmin.fetchTopicOffsets(this.topic),
          targetAdmin.fetchTopicOffsets(this.topic),
        ]);
        const copied = from.every((s) => {
          const t = to.find((x) => x.partition === s.partition);
          return t !== undefined && Number(t.high) >= Number(s.high) + sandboxOwnRecords(s.partition);
        });
        return copied ? true : undefined;
      },
      { timeoutMs: this.stepTimeoutMs, intervalMs: 250 },
    );
    this.step(`MirrorMaker 2 copied ${this.topic} to the target`);
    const endpoints: SandboxEndpoints = {
      testbed,
      mirrorMaker,
      services: [...this.services],
      configFile,
      healthAddress: `127.0.0.1:${healthPort}`,
      subjectPrefix: SUBJECT_PREFIX,
      ...(prometheus === undefined ? {} : { prometheus }),
    };
    this.endpoints = endpoints;
    return endpoints;
  }

  /**
   * The demo move: the group consumes part of the topic on the source and commits; its consumer stops;
   * once offsetsync applied that commit on the target, the same group consumes the rest there. Resolves
   * with the replayed and skipped records, by record identity, and the line that reports them.
   */
  async moveGroup(): Promise<{ count: MoveCount; line: string }> {
    try {
      return await this.doMoveGroup();
    } catch (error: unknown) {
      this.failed = true;
      throw error;
    }
  }

  private async doMoveGroup(): Promise<{ count: MoveCount; line: string }> {
    const endpoints = this.endpoints;
    if (endpoints === undefined) throw new Error('the sandbox has not started');
    const { testbed } = endpoints;
    const stopAt = demoStopOffsets(this.partitions, this.perPartition);
    const consumedOnSource = await this.consumeOnSource(this.client(testbed.source.bootstrapServers), stopAt);
    this.step(
      `group ${this.group} consumed ${consumedOnSource.length} records on the source, committed ${stopAt.join(', ')} and stopped`,
    );

    const targetOffsets = await this.waitForApplied(testbed, stopAt);
    this.step(
      `offsetsync committed ${this.group} on the target: ${stopAt.map((s, p) => `partition ${p} source ${s} -> target ${targetOffsets[p]}`).join(', ')}`,
    );

    const readOnTarget = await this.consumeOnTarget(this.client(testbed.target.bootstrapServers));
    this.step(`group ${this.group} read ${readOnTarget.length} records on the target`);
    const sourceRecords = Array.from({ length: this.partitions }, (_, p) =>
      Array.from({ length: this.perPartition }, (_, i) => demoRecordId(p, i)),
    ).flat();
    const count = countMove({ sourceRecords, consumedOnSource, readOnTarget });
    return { count, line: formatMoveLine(this.group, count) };
  }

  /**
   * Stops every process the sandbox started: the services first (so they leave the clusters politely),
   * then MirrorMaker, then Kafka and NATS; removes the data, keeping the logs under `.infra/logs` when
   * something failed. Runs once; later calls get the same promise. Resolves with the kept log folder.
   */
  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  private async doStop(): Promise<void> {
    await this.launching?.catch(() => undefined);
    for (const close of this.closers.splice(0).reverse()) await close().catch(() => undefined);
    await Promise.all(this.services.map((s) => stopProcess(s.pid, { group: true, graceMs: 15_000 })));
    if (this.prometheusPid !== undefined)
      await stopProcess(this.prometheusPid, { group: true, graceMs: 15_000 });
    if (this.mirrorMaker) await stopMirrorMaker(this.mirrorMaker);
    if (this.testbed) {
      const kept = await stopTestbed(this.testbed, { keepLogs: this.failed });
      if (kept) this.progress(Date.now() - this.began, `logs kept in ${kept}`);
    }
  }

  private step(text: string): void {
    this.progress(Date.now() - this.began, text);
  }

  /** Awaits a launch of servers; when stop() was called meanwhile, fails with {@link SandboxStopped}. */
  private async launch<T>(launching: Promise<T>): Promise<T> {
    this.launching = launching;
    const launched = await launching.finally(() => (this.launching = undefined));
    this.checkNotStopping();
    return launched;
  }

  private checkNotStopping(): void {
    if (this.stopping) throw new SandboxStopped();
  }

  /** Fails at once when the sandbox is stopping or a process it started has exited. */
  private checkAlive(): void {
    this.checkNotStopping();
    for (const service of this.services) {
      if (!isAlive(service.pid))
        throw new GiveUp(`the ${service.role} (pid ${service.pid}) exited; log ${service.logFile}`);
    }
    if (this.mirrorMaker && !isAlive(this.mirrorMaker.pid)) {
      throw new GiveUp(`MirrorMaker (pid ${this.mirrorMaker.pid}) exited; log ${this.mirrorMaker.logFile}`);
    }
  }

  private client(bootstrapServers: string): KafkaClient {
    return new Kafka({
      clientId: 'offsetsync-sandbox',
      brokers: [bootstrapServers],
      logLevel: logLevel.NOTHING,
    });
  }

  private async admin(kafka: KafkaClient): Promise<Admin> {
    const admin = kafka.admin();
    await admin.connect();
    this.closers.push(() => admin.disconnect());
    return admin;
  }

  /** The target's own records, before any copy: {@link sandboxOwnRecords} per partition, not demo records. */
  private async writeOwnTargetRecords(kafka: KafkaClient): Promise<void> {
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    try {
      await producer.send({
        topic: this.topic,
        messages: Array.from({ length: this.partitions }, (_, partition) =>
          Array.from({ length: sandboxOwnRecords(partition) }, (_, i) => ({
            partition,
            key: 'target-own',
            value: `target-own:${partition}:${i}`,
          })),
        ).flat(),
      });
    } finally {
      await producer.disconnect();
    }
  }

  private async writeDemoRecords(kafka: KafkaClient): Promise<void> {
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    try {
      const records = demoRecords(this.partitions, this.perPartition, Date.now() - 3_600_000);
      for (let start = 0; start < this.perPartition; start += 500) {
        await producer.sendBatch({
          topicMessages: [
            {
              topic: this.topic,
              messages: records.flatMap((partition) =>
                partition.slice(start, start + 500).map((r) => ({
                  partition: r.partition,
                  key: r.key,
                  value: r.value,
                  timestamp: String(r.timestampMs),
                })),
              ),
            },
          ],
        });
      }
    } finally {
      await producer.disconnect();
    }
  }

  private async writeServiceConfig(testbed: TestbedInfo, healthPort: number): Promise<string> {
    const dir = join(testbed.workDir, 'offsetsync');
    await mkdir(dir, { recursive: true });
    const cluster = (bootstrapServers: string) => ({
      bootstrapServers: [bootstrapServers],
      connectionTimeoutMs: '3s',
      requestTimeoutMs: '10s',
    });
    const config = {
      clusters: {
        source: cluster(testbed.source.bootstrapServers),
        target: cluster(testbed.target.bootstrapServers),
      },
      links: [{ source: 'source', target: 'target' }],
      nats: { servers: [testbed.nats.url], subjectPrefix: SUBJECT_PREFIX },
      collector: { cluster: 'source', fetchMaxWaitMs: '20ms' },
      translator: { target: 'target', pendingRetryMinMs: '100ms', pendingRetryMaxMs: '1s' },
      committer: { target: 'target' },
      health: { grpc: { host: '127.0.0.1', port: healthPort } },
      heartbeat: { intervalMs: '1s' },
      // Four processes share this file: each takes a free port for its own probe endpoint.
      probes: { port: 0 },
      telemetry: { prometheus: { enabled: false } },
      logging: { level: 'info' },
    };
    const file = join(dir, 'offsetsync.yaml');
    await writeFile(
      file,
      `# Written by offsetsync sandbox: the one config file of all four services.\n${stringify(config)}`,
    );
    return file;
  }

  /** Starts one service; with `metricsAddress` it serves Prometheus metrics there. */
  private startService(role: SandboxRole, configFile: string, metricsAddress?: string): SandboxService {
    const logFile = join(configFile, '..', `${role}.log`);
    // Settings come from the file only (the sandbox's own environment holds no service settings), but for
    // the metrics port: the four services share the file and each needs a port Prometheus knows.
    const env: NodeJS.ProcessEnv = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith(ENV_PREFIX)),
    );
    if (metricsAddress !== undefined) {
      const [host, port] = metricsAddress.split(':') as [string, string];
      env[`${ENV_PREFIX}TELEMETRY__PROMETHEUS__ENABLED`] = 'true';
      env[`${ENV_PREFIX}TELEMETRY__PROMETHEUS__HOST`] = host;
      env[`${ENV_PREFIX}TELEMETRY__PROMETHEUS__PORT`] = port;
    }
    const pid = spawnDetached(process.execPath, [CLI_MAIN, role, '--config', configFile], logFile, env);
    return { role, pid, logFile, ...(metricsAddress === undefined ? {} : { metricsAddress }) };
  }

  private async nats(url: string): Promise<{ nc: NatsConnection; jsm: JetStreamManager }> {
    const nc = await connect({ servers: url, name: 'offsetsync-sandbox' });
    this.closers.push(() => nc.close());
    return { nc, jsm: await nc.jetstreamManager() };
  }

  /** Waits until every service published a heartbeat: each one connected and provisioned its streams. */
  private async waitForHeartbeats(testbed: TestbedInfo): Promise<void> {
    const names = new Names(SUBJECT_PREFIX);
    const { jsm } = await this.nats(testbed.nats.url);
    await waitFor(
      'a heartbeat of every offsetsync service',
      async () => {
        this.checkAlive();
        const info = await jsm.streams.info(names.stream('heartbeats'), {
          subjects_filter: names.heartbeatFilter(),
        });
        const subjects = Object.keys(info.state.subjects ?? {});
        const beating = SANDBOX_ROLES.every((role) =>
          subjects.some((s) => s.startsWith(`${SUBJECT_PREFIX}.heartbeat.${role}.`)),
        );
        return beating ? true : undefined;
      },
      { timeoutMs: this.stepTimeoutMs, intervalMs: 250 },
    );
  }

  /** The demo consumer on the source: reads each partition up to its stop offset, commits it, leaves. */
  private async consumeOnSource(kafka: KafkaClient, stopAt: readonly number[]): Promise<string[]> {
    const consumer = kafka.consumer({ groupId: this.group });
    await consumer.connect();
    const consumed: string[] = [];
    try {
      await consumer.subscribe({ topic: this.topic, fromBeginning: true });
      const done = new Set<number>();
      await this.untilDone(`group ${this.group} to consume on the source`, (resolve, reject) => {
        consumer
          .run({
            autoCommit: false,
            eachBatch: async ({ batch }) => {
              const p = batch.partition;
              const stop = stopAt[p]!;
              if (done.has(p)) return;
              for (const m of batch.messages) {
                if (Number(m.offset) >= stop) break;
                consumed.push(m.value?.toString() ?? '');
              }
              if (Number(batch.lastOffset()) + 1 >= stop) {
                await consumer.commitOffsets([{ topic: this.topic, partition: p, offset: String(stop) }]);
                done.add(p);
                if (done.size === this.partitions) resolve();
              }
            },
          })
          .catch(reject);
      });
    } finally {
      await consumer.disconnect();
    }
    return consumed;
  }

  /** Waits until offsetsync applied the group's last source commit on the target, per partition. */
  private async waitForApplied(testbed: TestbedInfo, stopAt: readonly number[]): Promise<number[]> {
    const names = new Names(SUBJECT_PREFIX);
    const { jsm } = await this.nats(testbed.nats.url);
    return waitFor(
      `offsetsync to apply ${this.group} on the target`,
      async () => {
        this.checkAlive();
        const targetOffsets: number[] = [];
        for (let partition = 0; partition < this.partitions; partition++) {
          const subject = names.applied('source', 'target', {
            group: this.group,
            topic: this.topic,
            partition,
          });
          const message = await jsm.streams
            .getMessage(names.stream('applied'), { last_by_subj: subject })
            .catch(() => undefined);
          const event = message && OffsetApplied.decode(message.data);
          if (
            event?.outcome !== ApplyOutcome.APPLY_OUTCOME_APPLIED ||
            event.sourceOffset !== stopAt[partition]
          ) {
            return undefined;
          }
          targetOffsets.push(event.targetOffset);
        }
        return targetOffsets;
      },
      { timeoutMs: this.stepTimeoutMs, intervalMs: 250 },
    );
  }

  /** The same group on the target: reads from its committed offsets to the end of every partition. */
  private async consumeOnTarget(kafka: KafkaClient): Promise<string[]> {
    const admin = await this.admin(kafka);
    const ends = new Map(
      (await admin.fetchTopicOffsets(this.topic)).map((o) => [o.partition, Number(o.high)] as const),
    );
    const committed = await admin.fetchOffsets({ groupId: this.group, topics: [this.topic] });
    const reachedEnd = new Set<number>();
    for (const p of committed[0]?.partitions ?? []) {
      if (Number(p.offset) >= (ends.get(p.partition) ?? 0)) reachedEnd.add(p.partition);
    }
    const read: string[] = [];
    if (reachedEnd.size === this.partitions) return read;
    const consumer = kafka.consumer({ groupId: this.group });
    await consumer.connect();
    try {
      await consumer.subscribe({ topic: this.topic, fromBeginning: true });
      await this.untilDone(`group ${this.group} to read the rest on the target`, (resolve, reject) => {
        consumer
          .run({
            autoCommit: false,
            eachBatch: ({ batch }) => {
              for (const m of batch.messages) read.push(m.value?.toString() ?? '');
              if (Number(batch.lastOffset()) + 1 >= (ends.get(batch.partition) ?? 0))
                reachedEnd.add(batch.partition);
              if (reachedEnd.size === this.partitions) resolve();
              return Promise.resolve();
            },
          })
          .catch(reject);
      });
    } finally {
      await consumer.disconnect();
    }
    return read;
  }

  /** A promise settled by `body`, rejected after the step timeout or when a started process died. */
  private untilDone(
    what: string,
    body: (resolve: () => void, reject: (error: unknown) => void) => void,
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const deadline = Date.now() + this.stepTimeoutMs;
      const timer = setInterval(() => {
        try {
          this.checkAlive();
          if (Date.now() > deadline)
            throw new Error(`timed out after ${this.stepTimeoutMs} ms waiting for ${what}`);
        } catch (error: unknown) {
          clearInterval(timer);
          reject(asError(error));
        }
      }, 250);
      body(
        () => {
          clearInterval(timer);
          resolve();
        },
        (error) => {
          clearInterval(timer);
          reject(asError(error));
        },
      );
    });
  }
}

/**
 * Thrown by a step that notices the sandbox is being stopped (Ctrl-C during the start). A GiveUp, so a
 * wait that sees it ends at once.
 */
export class SandboxStopped extends GiveUp {
  override name = 'SandboxStopped';
  constructor() {
    super('the sandbox is stopping');
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
