// `offsetsync sandbox`: everything on one machine. Three Kafka clusters (the source and two targets) and
// NATS (the test bed); a MirrorMaker 2 per target copying a demo topic from the source, to `target` under
// the same name and to `cloud` under MirrorMaker's default name (see sandbox-targets.ts); the offsetsync
// processes (sandbox-services.ts); and a demo consumer group that consumes part of the topic on the source
// and then moves to each target in turn.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import kafkajs, { type Admin, type Kafka as KafkaClient } from 'kafkajs';
import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import { ApplyOutcome, Names, OffsetApplied } from '@offsetsync/contracts';
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
import { consumeToEnd, consumeUpTo, type ConsumerWatch } from './demo-consumers.js';
import { writeDemoRecords, writeOwnRecords } from './demo-producers.js';
import { demoRecordId, demoStopOffsets } from './demo-workload.js';
import { countMove, formatMoveLine, formatPositions, type MoveCount, type Position } from './move-report.js';
import { startSandboxPrometheus, type SandboxPrometheus } from './sandbox-prometheus.js';
import {
  formatServicePids,
  sandboxServiceConfigText,
  sandboxServiceSpecs,
  serviceEnv,
  serviceLogName,
  serviceName,
  unheardRoles,
  type SandboxServiceSpec,
} from './sandbox-services.js';
import {
  copyTopicName,
  ownRecordCount,
  SANDBOX_SOURCE,
  SANDBOX_TARGETS,
  sandboxClusters,
  type SandboxTarget,
} from './sandbox-targets.js';

const { Kafka, logLevel } = kafkajs;

/** What the sandbox runs; every field has a default. */
export interface SandboxOptions {
  /** Demo topic on the source, copied to each target by a MirrorMaker. Default: `demo-orders`. */
  topic?: string;
  /** Demo consumer group moved from the source to each target. Default: `demo-app`. */
  group?: string;
  /** Partitions of the demo topic. Default: 3. */
  partitions?: number;
  /** Demo records written to each partition. Default: 2000. */
  recordsPerPartition?: number;
  /** How long one step may take before the sandbox gives up. Default: 180 000 ms. */
  stepTimeoutMs?: number;
  /**
   * Also run Debian's Prometheus (/usr/bin/prometheus) scraping the offsetsync processes, with the
   * chart's alert rules. Default: false.
   */
  prometheus?: boolean;
}

/** One line of progress: what became ready, and when (milliseconds since the sandbox started). */
export type ProgressListener = (elapsedMs: number, text: string) => void;

/** An offsetsync process the sandbox started. */
export interface SandboxService extends SandboxServiceSpec {
  pid: number;
  logFile: string;
  /** `host:port` of its Prometheus metrics, with the `prometheus` option. */
  metricsAddress?: string;
}

/** A target of the running sandbox: its cluster, its copy of the demo topic and the MirrorMaker writing it. */
export interface SandboxTargetEndpoints {
  cluster: string;
  bootstrapServers: string;
  /** The demo topic's copy there. */
  topic: string;
  mirrorMaker: MirrorMakerInfo;
}

/** Where the running sandbox can be reached. */
export interface SandboxEndpoints {
  testbed: TestbedInfo;
  /** The demo topic on the source. */
  topic: string;
  /** In the order the group moves to them. */
  targets: readonly SandboxTargetEndpoints[];
  services: readonly SandboxService[];
  configFile: string;
  healthAddress: string;
  subjectPrefix: string;
  /** The Prometheus scraping the services, with the `prometheus` option. */
  prometheus?: SandboxPrometheus;
}

/** The demo group's move to one target. */
export interface SandboxMove {
  target: string;
  count: MoveCount;
  /** `moved group <group> to <target>: replayed=<n> skipped=<n>`. */
  line: string;
}

const CLI_MAIN = fileURLToPath(new URL('../main.js', import.meta.url));
const SUBJECT_PREFIX = 'sandbox';

/**
 * The sandbox's lifecycle: {@link start} brings everything up step by step, {@link moveGroup} runs the
 * demo move, {@link stop} stops every process it started (by pid and process group), once.
 */
export class Sandbox {
  private readonly topic: string;
  private readonly group: string;
  private readonly partitions: number;
  private readonly perPartition: number;
  private readonly stepTimeoutMs: number;
  private readonly withPrometheus: boolean;
  private readonly targets: readonly SandboxTarget[] = SANDBOX_TARGETS;
  private prometheusPid: number | undefined;
  private readonly began = Date.now();
  private readonly progress: ProgressListener;
  private testbed: TestbedInfo | undefined;
  private readonly mirrorMakers: MirrorMakerInfo[] = [];
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

  /** Pids of every process started so far (servers, MirrorMakers, services); each leads its own process group. */
  pids(): number[] {
    const t = this.testbed;
    return [
      ...(t ? [...Object.values(t.clusters).map((c) => c.pid), t.nats.pid] : []),
      ...this.mirrorMakers.map((m) => m.pid),
      ...this.services.map((s) => s.pid),
      ...(this.prometheusPid === undefined ? [] : [this.prometheusPid]),
    ];
  }

  get isStopping(): boolean {
    return this.stopping !== undefined;
  }

  /** Starts everything and writes the demo records; resolves when the services run and the copies are made. */
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
    const testbed = await this.launch(
      startTestbed({ clusters: sandboxClusters(this.targets) }).then((info) => (this.testbed = info)),
    );
    this.step(
      `${Object.values(testbed.clusters)
        .map((c) => `${c.name} Kafka ${c.bootstrapServers}`)
        .join(', ')}, NATS ${testbed.nats.url}`,
    );

    const sourceAdmin = await this.admin(this.client(this.bootstrap(testbed, SANDBOX_SOURCE)));
    await sourceAdmin.createTopics({
      topics: [{ topic: this.topic, numPartitions: this.partitions }],
      waitForLeaders: true,
    });
    await writeDemoRecords(this.client(this.bootstrap(testbed, SANDBOX_SOURCE)), {
      topic: this.topic,
      partitions: this.partitions,
      perPartition: this.perPartition,
    });
    this.step(
      `demo topic ${this.topic} on the source: ${this.partitions} partitions x ${this.perPartition} records, 10 records per timestamp`,
    );

    // As after a real migration, each target holds records of its own before the copy, a different number
    // on each: every copy lands at another offset than its original, and than its other copy, which only
    // translation gets right.
    const targetAdmins = new Map<string, Admin>();
    for (const target of this.targets) {
      const kafka = this.client(this.bootstrap(testbed, target.cluster));
      const admin = await this.admin(kafka);
      targetAdmins.set(target.cluster, admin);
      const copy = copyTopicName(target, this.topic);
      await admin.createTopics({
        topics: [{ topic: copy, numPartitions: this.partitions }],
        waitForLeaders: true,
      });
      await writeOwnRecords(kafka, target, { topic: copy, partitions: this.partitions });
      this.step(
        `${target.cluster}'s own records in ${copy} first: ${this.partitionNumbers()
          .map((p) => ownRecordCount(target, p))
          .join(', ')} per partition`,
      );
    }

    this.checkNotStopping();
    const mirrorMakers = await this.launch(this.startMirrorMakers(testbed, dist.libDir));
    for (const [i, target] of this.targets.entries())
      this.step(
        `MirrorMaker 2 copying ${this.topic} to ${target.cluster} as ${copyTopicName(target, this.topic)} (${target.replicationPolicy === 'identity' ? 'IdentityReplicationPolicy' : 'DefaultReplicationPolicy'}; pid ${mirrorMakers[i]!.pid}, ${mirrorMakers[i]!.propertiesFile})`,
      );

    this.checkNotStopping();
    const healthPort = await freePort();
    const specs = sandboxServiceSpecs(this.targets);
    const configFile = await this.writeServiceConfig(testbed, healthPort, specs);
    for (const spec of specs)
      this.services.push(
        this.startService(
          spec,
          configFile,
          this.withPrometheus ? `127.0.0.1:${await freePort()}` : undefined,
        ),
      );
    await this.waitForHeartbeats(testbed, specs);
    this.step(`offsetsync running: ${formatServicePids(this.services)}; config ${configFile}`);
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
        `Prometheus ${prometheus.address} scraping the ${this.services.length} offsetsync processes with the chart's alert rules (pid ${prometheus.pid}, ${prometheus.configFile})`,
      );
    }

    for (const target of this.targets) {
      const copy = copyTopicName(target, this.topic);
      await waitFor(
        `MirrorMaker to copy ${this.topic} to ${target.cluster}`,
        async () => {
          this.checkAlive();
          const [from, to] = await Promise.all([
            sourceAdmin.fetchTopicOffsets(this.topic),
            targetAdmins.get(target.cluster)!.fetchTopicOffsets(copy),
          ]);
          const copied = from.every((s) => {
            const t = to.find((x) => x.partition === s.partition);
            return t !== undefined && Number(t.high) >= Number(s.high) + ownRecordCount(target, s.partition);
          });
          return copied ? true : undefined;
        },
        { timeoutMs: this.stepTimeoutMs, intervalMs: 250 },
      );
      this.step(`MirrorMaker 2 copied ${this.topic} to ${target.cluster} as ${copy}`);
    }
    const endpoints: SandboxEndpoints = {
      testbed,
      topic: this.topic,
      targets: this.targets.map((target, i) => ({
        cluster: target.cluster,
        bootstrapServers: this.bootstrap(testbed, target.cluster),
        topic: copyTopicName(target, this.topic),
        mirrorMaker: mirrorMakers[i]!,
      })),
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
   * Starts a MirrorMaker 2 per target, together. One process could copy both flows (MirrorMaker takes a
   * replication policy per flow, `source->cloud.replication.policy.class`), but the test bed's launcher
   * writes the properties of one flow, each explained, and a process per target keeps each target's
   * mm2.properties to itself. Every one that starts is recorded before any failure is reported, so that
   * stop() stops it.
   */
  private async startMirrorMakers(testbed: TestbedInfo, libDir: string): Promise<MirrorMakerInfo[]> {
    const started = await Promise.allSettled(
      this.targets.map((target) =>
        startMirrorMaker({
          dir: join(testbed.workDir, `mirror-maker-${target.cluster}`),
          libDir,
          sourceBootstrapServers: this.bootstrap(testbed, SANDBOX_SOURCE),
          targetBootstrapServers: this.bootstrap(testbed, target.cluster),
          sourceAlias: SANDBOX_SOURCE,
          targetAlias: target.cluster,
          topics: [this.topic],
          replicationPolicy: target.replicationPolicy,
          instanceName: `sandbox-${target.cluster}`,
          readyTimeoutMs: this.stepTimeoutMs,
        }).then((info) => {
          this.mirrorMakers.push(info);
          return info;
        }),
      ),
    );
    const failed = started.find((s) => s.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    return started.map((s) => (s as PromiseFulfilledResult<MirrorMakerInfo>).value);
  }

  /**
   * The demo move: the group consumes part of the topic on the source and commits; its consumer stops;
   * once offsetsync applied that commit on every target, the same group consumes the rest on each
   * target in turn. Resolves with each move's replayed and skipped records, by record identity, and the
   * line that reports them.
   */
  async moveGroup(): Promise<SandboxMove[]> {
    try {
      return await this.doMoveGroup();
    } catch (error: unknown) {
      this.failed = true;
      throw error;
    }
  }

  private async doMoveGroup(): Promise<SandboxMove[]> {
    const endpoints = this.endpoints;
    if (endpoints === undefined) throw new Error('the sandbox has not started');
    const { testbed } = endpoints;
    const stopAt = demoStopOffsets(this.partitions, this.perPartition);
    const consumedOnSource = await consumeUpTo(
      this.client(this.bootstrap(testbed, SANDBOX_SOURCE)),
      { group: this.group, topic: this.topic, stopAt },
      this.watch(),
    );
    this.step(
      `group ${this.group} consumed ${consumedOnSource.length} records on the source, committed ${stopAt.join(', ')} and stopped`,
    );

    const { jsm } = await this.nats(testbed.nats.url);
    const applied = new Map<string, Position[]>();
    for (const target of this.targets)
      applied.set(target.cluster, await this.waitForApplied(jsm, target.cluster, stopAt));
    this.step(`offsetsync committed ${this.group} on ${this.targets.map((t) => t.cluster).join(' and ')}:`);
    for (const p of this.partitionNumbers())
      this.step(
        formatPositions(
          p,
          { cluster: SANDBOX_SOURCE, topic: this.topic, offset: stopAt[p]! },
          this.targets.map((t) => applied.get(t.cluster)![p]!),
        ),
      );

    const sourceRecords = this.partitionNumbers().flatMap((p) =>
      Array.from({ length: this.perPartition }, (_, i) => demoRecordId(p, i)),
    );
    const moves: SandboxMove[] = [];
    for (const target of endpoints.targets) {
      const readOnTarget = await consumeToEnd(
        this.client(target.bootstrapServers),
        { group: this.group, topic: target.topic },
        this.watch(),
      );
      this.step(
        `group ${this.group} read ${readOnTarget.length} records of ${target.topic} on ${target.cluster}`,
      );
      const count = countMove({ sourceRecords, consumedOnSource, readOnTarget });
      moves.push({ target: target.cluster, count, line: formatMoveLine(this.group, target.cluster, count) });
    }
    return moves;
  }

  /**
   * Stops every process the sandbox started: the services first (so they leave the clusters politely),
   * then the MirrorMakers, then Kafka and NATS; removes the data, keeping the logs under `.infra/logs`
   * when something failed. Runs once; later calls get the same promise.
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
    await Promise.all(this.mirrorMakers.map((m) => stopMirrorMaker(m)));
    if (this.testbed) {
      const kept = await stopTestbed(this.testbed, { keepLogs: this.failed });
      if (kept) this.progress(Date.now() - this.began, `logs kept in ${kept}`);
    }
  }

  private step(text: string): void {
    this.progress(Date.now() - this.began, text);
  }

  private partitionNumbers(): number[] {
    return Array.from({ length: this.partitions }, (_, p) => p);
  }

  private bootstrap(testbed: TestbedInfo, cluster: string): string {
    const info = testbed.clusters[cluster];
    if (info === undefined) throw new Error(`the sandbox's test bed has no cluster ${cluster}`);
    return info.bootstrapServers;
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
        throw new GiveUp(`the ${serviceName(service)} (pid ${service.pid}) exited; log ${service.logFile}`);
    }
    for (const mirrorMaker of this.mirrorMakers) {
      if (!isAlive(mirrorMaker.pid))
        throw new GiveUp(`MirrorMaker (pid ${mirrorMaker.pid}) exited; log ${mirrorMaker.logFile}`);
    }
  }

  /** What the demo consumers wait under: the step timeout, and {@link checkAlive}. */
  private watch(): ConsumerWatch {
    return { timeoutMs: this.stepTimeoutMs, check: () => this.checkAlive() };
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

  private async writeServiceConfig(
    testbed: TestbedInfo,
    healthPort: number,
    specs: readonly SandboxServiceSpec[],
  ): Promise<string> {
    const dir = join(testbed.workDir, 'offsetsync');
    await mkdir(dir, { recursive: true });
    const file = join(dir, 'offsetsync.yaml');
    const kafka = Object.fromEntries(
      Object.values(testbed.clusters).map((c) => [c.name, c.bootstrapServers] as const),
    );
    await writeFile(
      file,
      sandboxServiceConfigText(
        { kafka, natsUrl: testbed.nats.url, subjectPrefix: SUBJECT_PREFIX, healthPort },
        this.targets,
        specs,
      ),
    );
    return file;
  }

  /** Starts one service; with `metricsAddress` it serves Prometheus metrics there. */
  private startService(
    spec: SandboxServiceSpec,
    configFile: string,
    metricsAddress?: string,
  ): SandboxService {
    const logFile = join(configFile, '..', serviceLogName(spec));
    const pid = spawnDetached(
      process.execPath,
      [CLI_MAIN, spec.role, '--config', configFile],
      logFile,
      serviceEnv(spec, process.env, metricsAddress),
    );
    return { ...spec, pid, logFile, ...(metricsAddress === undefined ? {} : { metricsAddress }) };
  }

  private async nats(url: string): Promise<{ nc: NatsConnection; jsm: JetStreamManager }> {
    const nc = await connect({ servers: url, name: 'offsetsync-sandbox' });
    this.closers.push(() => nc.close());
    return { nc, jsm: await nc.jetstreamManager() };
  }

  /** Waits until every service published a heartbeat: each one connected and provisioned its streams. */
  private async waitForHeartbeats(testbed: TestbedInfo, specs: readonly SandboxServiceSpec[]): Promise<void> {
    const names = new Names(SUBJECT_PREFIX);
    const { jsm } = await this.nats(testbed.nats.url);
    await waitFor(
      'a heartbeat of every offsetsync process',
      async () => {
        this.checkAlive();
        const info = await jsm.streams.info(names.stream('heartbeats'), {
          subjects_filter: names.heartbeatFilter(),
        });
        const subjects = Object.keys(info.state.subjects ?? {});
        return unheardRoles(specs, subjects, SUBJECT_PREFIX).length === 0 ? true : undefined;
      },
      { timeoutMs: this.stepTimeoutMs, intervalMs: 250 },
    );
  }

  /**
   * Waits until offsetsync applied the group's last source commit on `target`, per partition; resolves
   * with where: the topic offsetsync reports there (its link's topic names) and the offset.
   */
  private async waitForApplied(
    jsm: JetStreamManager,
    target: string,
    stopAt: readonly number[],
  ): Promise<Position[]> {
    const names = new Names(SUBJECT_PREFIX);
    return waitFor(
      `offsetsync to apply ${this.group} on ${target}`,
      async () => {
        this.checkAlive();
        const positions: Position[] = [];
        for (const partition of this.partitionNumbers()) {
          const subject = names.applied(SANDBOX_SOURCE, target, {
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
          // An empty target topic means the same name as on the source.
          positions.push({
            cluster: target,
            topic: event.targetTopic === '' ? this.topic : event.targetTopic,
            offset: event.targetOffset,
          });
        }
        return positions;
      },
      { timeoutMs: this.stepTimeoutMs, intervalMs: 250 },
    );
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
