// The servers and processes of the offsetsync vs MirrorMaker 2 scenarios (issue 7): the test bed (two
// Kafka clusters, nats-server), two MirrorMaker 2 instances and the three offsetsync services, all on the
// same brokers at once. MirrorMaker and offsetsync never commit the same group on the target: each system
// gets its own set of groups, with the same commits.
//
//   mm2-default  copies the topics with the identity policy (the copy offsetsync translates to) and syncs
//                the groups `mm2d-<run>-*` with MirrorMaker's defaults (60 s intervals, offset.lag.max 100)
//   mm2-tuned    copies the same topics to `source.<topic>` (default policy, so the two copies do not mix)
//                and syncs the groups `mm2t-<run>-*` every second, with offset.lag.max 0
//   offsetsync   collector, translator and committer, groups `osync-<run>-*`, onto the identity copy
//
// A bed may hold further clusters for targets that join the running system later (`addedTargets`): a link
// to one of them gets its own translator and committer (`startLink`), as an operator would add them.
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { connect, NatsError, type NatsConnection } from 'nats';
import pino from 'pino';
import { Heartbeat, Names } from '@offsetsync/contracts';
import { provisionStreams, streamSpecs } from '@offsetsync/jetstream';
import { KafkaAdapter } from '@offsetsync/kafka';
import {
  ensureKafkaDistribution,
  startMirrorMaker,
  stopMirrorMaker,
  type MirrorMakerInfo,
  type MirrorMakerOffsetTranslation,
} from '@offsetsync/testbed';
import {
  acquireTestbed,
  releaseTestbed,
  type AcquiredTestbed,
  type Cleanup,
  type Role,
  type ServiceProcess,
} from '@offsetsync/harness';
import type { BootstrapLedger } from './bootstrap-ledger.js';
import { sourceIndexOf, sourcePositionAt } from './mm2-compare.js';
import { startBenchService } from './bench-service.js';

const { Kafka, logLevel } = kafkajs;

/** The systems compared; each commits its own groups on the target. */
export const SYSTEMS = ['offsetsync', 'mm2_default', 'mm2_tuned'] as const;
export type SystemName = (typeof SYSTEMS)[number];
const MIRROR_MAKERS = ['mm2_default', 'mm2_tuned'] as const;
type MirrorMakerSystem = (typeof MIRROR_MAKERS)[number];

/** The tuned MirrorMaker: what "tuned to 1 s" sets. */
export const MM2_TUNED: Omit<MirrorMakerOffsetTranslation, 'groups'> = {
  checkpointIntervalSeconds: 1,
  syncGroupOffsetsIntervalSeconds: 1,
  offsetLagMax: 0,
};

/** Source alias, and so the prefix the tuned MirrorMaker's default replication policy gives topic names. */
const SOURCE = 'source';
const TARGET = 'target';
/** JetStream's error code for a message get that found nothing: the collector sent no heartbeat yet. */
const NO_MESSAGE_FOUND = 10037;
/** The services of the pipeline; the benchmarks run no health service. */
type PipelineRole = Exclude<Role, 'health'>;
const ROLES: readonly PipelineRole[] = ['collector', 'translator', 'committer'];

export interface ComparisonBed {
  run: string;
  testbed: AcquiredTestbed;
  source: KafkaAdapter;
  target: KafkaAdapter;
  sourceKafka: kafkajs.Kafka;
  targetKafka: kafkajs.Kafka;
  /** The group name prefix of each system. */
  groupPrefix: Record<SystemName, string>;
  /** The name on the target of a source topic, per system. */
  targetTopic(system: SystemName, topic: string): string;
  /** The MirrorMaker instances running now (a deferred start replaces those of the selected systems). */
  mirrorMakers: Record<MirrorMakerSystem, MirrorMakerInfo>;
  nc: NatsConnection;
  /** offsetsync's service processes once started (collector, translator, committer). */
  services: readonly ServiceProcess[];
  /** The last heartbeat offsetsync's collector sent, undefined before its first. */
  collectorHeartbeat(): Promise<Heartbeat | undefined>;
  /**
   * Starts a translator and a committer for the link from the source to `target`, one of the bed's
   * `addedTargets`, configured with every link as a system that gained this one is. The collector runs
   * on as it is: it serves every link from the same streams. `stopOffsetsync` stops these services too.
   */
  startLink(target: string): Promise<readonly ServiceProcess[]>;
  /**
   * With `systemsStart: 'deferred'`: starts the selected systems' group sync, all at once (offsetsync's
   * services; each selected MirrorMaker restarted with its groups). May be called again for other systems;
   * rejects when one of them was started already.
   */
  startSystems(systems: readonly SystemName[]): Promise<SystemsStarted>;
  /** Stops offsetsync's services (when running), so that a system measured next has the machine. */
  stopOffsetsync(): Promise<void>;
}

/** What `startSystems` did: ms from its call until each system was started (MirrorMaker: logged that it started). */
interface SystemsStarted {
  startedMs: Partial<Record<SystemName, number>>;
}

/**
 * Starts the test bed, creates `topics` on both clusters (the target's copies with `ownRecords(p)` records
 * of their own first, so no offset is the same on both), fills the source through `fill`, then starts both
 * MirrorMakers and the offsetsync services (see `systemsStart`). Every step registers its undo on `cleanup`.
 */
export async function startComparisonBed(options: {
  say: (line: string) => void;
  cleanup: Cleanup;
  topics: readonly string[];
  partitions: number;
  ownRecords: (partition: number) => number;
  run?: string;
  fill: (producer: kafkajs.Producer) => Promise<void>;
  /**
   * `at-once` (default): the MirrorMakers sync their groups from the start and offsetsync's services start
   * before this returns. `deferred`: the MirrorMakers only copy records (and write offset syncs) and
   * offsetsync's services wait until `startSystems` is called, so groups can commit on the source first.
   */
  systemsStart?: 'at-once' | 'deferred';
  /**
   * Names of further Kafka clusters the bed starts, for targets that join later (see `startLink`); they
   * hold no topic until the caller creates one. Default: none.
   */
  addedTargets?: readonly string[];
}): Promise<ComparisonBed> {
  const { say, cleanup } = options;
  const run = options.run ?? randomBytes(3).toString('hex');
  const addedTargets = options.addedTargets ?? [];
  const testbedStart = acquireTestbed({
    log: (line) => say(`test bed: ${line}`),
    ...(addedTargets.length === 0 ? {} : { clusters: [SOURCE, TARGET, ...addedTargets] }),
  });
  cleanup.push('stopping the test bed', async () => {
    const testbed = await testbedStart.catch(() => undefined);
    if (testbed === undefined) return;
    const kept = await releaseTestbed(testbed, { keepLogs: cleanup.failed });
    if (kept !== undefined) say(`server logs kept in ${kept}`);
  });
  const testbed = await testbedStart;
  const { source, target, nats } = testbed.info;
  say(`test bed: source ${source.bootstrapServers}, target ${target.bootstrapServers}, NATS ${nats.url}`);

  const quiet =
    (cluster: string): kafkajs.logCreator =>
    () =>
    (entry) => {
      say(`kafkajs (${cluster}): ${entry.log.message}`);
    };
  const sourceKafka = new Kafka({
    clientId: 'bench-mm2',
    brokers: [source.bootstrapServers],
    logLevel: logLevel.ERROR,
    logCreator: quiet('source'),
  });
  const targetKafka = new Kafka({
    clientId: 'bench-mm2',
    brokers: [target.bootstrapServers],
    logLevel: logLevel.ERROR,
    logCreator: quiet('target'),
  });
  const adapter = (bootstrapServers: string): KafkaAdapter =>
    new KafkaAdapter({
      cluster: { bootstrapServers: [bootstrapServers], connectionTimeoutMs: 3_000, requestTimeoutMs: 10_000 },
      clientId: 'bench-mm2',
      logger: pino({ level: 'silent' }),
    });
  const sourceAdapter = adapter(source.bootstrapServers);
  const targetAdapter = adapter(target.bootstrapServers);
  cleanup.push('disconnecting the adapters', () =>
    Promise.all([sourceAdapter.disconnect(), targetAdapter.disconnect()]),
  );

  const targetTopic = (system: SystemName, topic: string): string =>
    system === 'mm2_tuned' ? `${SOURCE}.${topic}` : topic;
  const sourceAdmin = sourceKafka.admin();
  const targetAdmin = targetKafka.admin();
  await Promise.all([sourceAdmin.connect(), targetAdmin.connect()]);
  cleanup.push('disconnecting the admin clients', () =>
    Promise.all([sourceAdmin.disconnect(), targetAdmin.disconnect()]),
  );
  const partitions = options.partitions;
  await sourceAdmin.createTopics({
    topics: options.topics.map((topic) => ({ topic, numPartitions: partitions })),
    waitForLeaders: true,
  });
  const targetTopics = options.topics.flatMap((topic) => [
    targetTopic('offsetsync', topic),
    targetTopic('mm2_tuned', topic),
  ]);
  await targetAdmin.createTopics({
    topics: targetTopics.map((topic) => ({ topic, numPartitions: partitions })),
    waitForLeaders: true,
  });
  const targetProducer = targetKafka.producer();
  await targetProducer.connect();
  await targetProducer.sendBatch({
    topicMessages: targetTopics.map((topic) => ({
      topic,
      messages: Array.from({ length: partitions }, (_, p) =>
        Array.from({ length: options.ownRecords(p) }, (_, i) => ({ partition: p, value: `own:${p}:${i}` })),
      ).flat(),
    })),
  });
  await targetProducer.disconnect();
  const producer = sourceKafka.producer();
  await producer.connect();
  cleanup.push('disconnecting the producer', () => producer.disconnect());
  await options.fill(producer);
  say(
    `topics ${options.topics.join(', ')}: ${partitions} partitions; target copies start after their own records`,
  );

  const groupPrefix: Record<SystemName, string> = {
    offsetsync: `osync-${run}-`,
    mm2_default: `mm2d-${run}-`,
    mm2_tuned: `mm2t-${run}-`,
  };
  const deferred = options.systemsStart === 'deferred';
  const libDir = (await ensureKafkaDistribution()).libDir;
  const mirrorMakers = {} as Record<MirrorMakerSystem, MirrorMakerInfo>;
  /** Instances a deferred start replaced: stopped already, their folders removed with the rest. */
  const replaced: Array<{ system: MirrorMakerSystem; info: MirrorMakerInfo }> = [];
  // Cleanup stops whichever instance of a MirrorMaker runs by then (a deferred start replaces them).
  for (const system of MIRROR_MAKERS)
    cleanup.push(`stopping MirrorMaker ${system}`, async () => {
      const current = mirrorMakers[system] as MirrorMakerInfo | undefined;
      const all = new Set([...replaced.filter((r) => r.system === system).map((r) => r.info), current]);
      for (const info of all) {
        if (info === undefined) continue;
        await stopMirrorMaker(info);
        if (!cleanup.failed) await rm(info.dir, { recursive: true, force: true });
        else say(`MirrorMaker ${system} log kept in ${info.logFile}`);
      }
    });
  /**
   * Starts one MirrorMaker. With `groups` false it syncs no benchmark group (its group filter matches
   * none) but still copies the records and writes offset syncs, which a later instance of the same name
   * reads back from the offset-syncs topic.
   */
  const startOne = async (
    system: MirrorMakerSystem,
    mode: { groups: boolean; dirSuffix: string },
  ): Promise<MirrorMakerInfo> => {
    if (cleanup.stopping) throw new Error(`not starting MirrorMaker ${system}: the benchmark is stopping`);
    const instanceName = `bench-${system.replace('_', '-')}-${run}`;
    const dir = join(testbed.info.workDir, `${instanceName}${mode.dirSuffix}`);
    const translation: MirrorMakerOffsetTranslation = {
      groups: [mode.groups ? `${groupPrefix[system].replaceAll('-', '\\-')}.*` : `no\\-group\\-${run}`],
      ...(system === 'mm2_tuned' ? MM2_TUNED : {}),
    };
    const info = await startMirrorMaker({
      dir,
      libDir,
      sourceBootstrapServers: source.bootstrapServers,
      targetBootstrapServers: target.bootstrapServers,
      sourceAlias: SOURCE,
      targetAlias: TARGET,
      topics: options.topics,
      instanceName,
      replicationPolicy: system === 'mm2_tuned' ? 'default' : 'identity',
      offsetTranslation: translation,
      readyTimeoutMs: 180_000,
    });
    mirrorMakers[system] = info;
    return info;
  };
  const mmStart = Date.now();
  await Promise.all(MIRROR_MAKERS.map((system) => startOne(system, { groups: !deferred, dirSuffix: '' })));
  say(
    `MirrorMaker 2 default (pid ${mirrorMakers.mm2_default.pid}) and tuned (pid ${mirrorMakers.mm2_tuned.pid}) started in ${Date.now() - mmStart} ms` +
      (deferred ? ', copying records only (no benchmark group yet)' : ''),
  );

  const nc = await connect({ servers: nats.url });
  cleanup.push('closing the NATS connection', () => nc.close());
  const names = new Names(`bench_mm2_${run}`);
  await provisionStreams(await nc.jetstreamManager(), streamSpecs(names, 1));
  const clusterConfig = (bootstrapServers: string): Record<string, unknown> => ({
    bootstrapServers: [bootstrapServers],
    connectionTimeoutMs: '3s',
    requestTimeoutMs: '10s',
  });
  const common = {
    clusters: {
      [SOURCE]: clusterConfig(source.bootstrapServers),
      [TARGET]: clusterConfig(target.bootstrapServers),
    },
    links: [{ source: SOURCE, target: TARGET }],
    nats: { servers: [nats.url], subjectPrefix: names.prefix },
    heartbeat: { intervalMs: '1s' },
    telemetry: { prometheus: { enabled: false } },
    probes: { port: 0 },
    logging: { level: process.env.BENCH_SERVICE_LOG_LEVEL ?? 'warn' },
  };
  const translatorRetries = { pendingRetryMinMs: '100ms', pendingRetryMaxMs: '1s' };
  const sections: Record<PipelineRole, Record<string, unknown>> = {
    collector: {
      collector: {
        cluster: SOURCE,
        consumerGroup: `offsetsync-bench-mm2-${run}`,
        groups: { include: [`^${groupPrefix.offsetsync}`] },
        fetchMaxWaitMs: '20ms',
      },
    },
    translator: { translator: { target: TARGET, ...translatorRetries } },
    committer: { committer: { target: TARGET } },
  };
  const services: ServiceProcess[] = [];
  /** Services of links started later (`startLink`). */
  const linkServices: ServiceProcess[] = [];
  const startService = async (
    role: PipelineRole,
    name: string,
    config: Record<string, unknown>,
  ): Promise<ServiceProcess> => {
    if (cleanup.stopping) throw new Error(`not starting the ${name}: the benchmark is stopping`);
    const service = await startBenchService(role, config);
    cleanup.push(`stopping the ${name}`, async () => {
      await service.stop();
      if (cleanup.failed) say(`${name} config and log kept in ${service.dir}`);
      else if (process.env.BENCH_KEEP_SERVICE_LOGS === '1') say(`${name} log kept in ${service.logFile}`);
      else await rm(service.dir, { recursive: true, force: true });
    });
    return service;
  };
  const startServices = async (): Promise<void> => {
    for (const role of ROLES)
      services.push(
        await startService(role, role, {
          ...common,
          instance: { id: `bench-mm2-${role}` },
          ...sections[role],
        }),
      );
    say(
      `offsetsync collector, translator and committer started (pids ${services.map((s) => s.pid).join(', ')})`,
    );
  };
  /** Systems whose group sync was started. */
  const started = new Set<SystemName>(deferred ? [] : SYSTEMS);
  if (!deferred) await startServices();
  let starting: Promise<unknown> | undefined;
  // Runs before the MirrorMakers are stopped: an interrupted start finishes first, so that nothing it
  // launches is left running (what it started registers its own undo step, which runs next).
  cleanup.push('waiting for the systems being started', async () => {
    await starting?.catch(() => undefined);
  });

  const startSystems = (systems: readonly SystemName[]): Promise<SystemsStarted> => {
    const again = systems.filter((system) => started.has(system));
    if (again.length > 0) return Promise.reject(new Error(`started already: ${again.join(', ')}`));
    for (const system of systems) started.add(system);
    const promise = startSelected(systems);
    // Cleanup waits for every start (see above), also one called after an earlier start finished.
    const earlier = starting;
    starting = Promise.allSettled([earlier, promise]);
    return promise;
  };
  const stopOffsetsync = async (): Promise<void> => {
    await Promise.all([...services, ...linkServices].map((service) => service.stop()));
  };
  const startLink = async (target: string): Promise<readonly ServiceProcess[]> => {
    const cluster = testbed.info.clusters[target];
    if (!addedTargets.includes(target) || cluster === undefined)
      throw new Error(`${target} is not one of the bed's added targets (${addedTargets.join(', ')})`);
    if (services.length === 0)
      throw new Error(`a link to ${target} joins a running system: start offsetsync first`);
    const config = {
      ...common,
      clusters: { ...common.clusters, [target]: clusterConfig(cluster.bootstrapServers) },
      links: [...common.links, { source: SOURCE, target }],
    };
    const started = await Promise.all([
      startService('translator', `translator of ${target}`, {
        ...config,
        instance: { id: `bench-mm2-translator-${target}` },
        translator: { target, ...translatorRetries },
      }),
      startService('committer', `committer of ${target}`, {
        ...config,
        instance: { id: `bench-mm2-committer-${target}` },
        committer: { target },
      }),
    ]);
    linkServices.push(...started);
    return started;
  };
  const collectorHeartbeat = async (): Promise<Heartbeat | undefined> => {
    const jsm = await nc.jetstreamManager();
    try {
      const message = await jsm.streams.getMessage(names.stream('heartbeats'), {
        last_by_subj: names.heartbeat('collector', 'bench-mm2-collector'),
      });
      return Heartbeat.decode(message.data);
    } catch (error: unknown) {
      if (error instanceof NatsError && error.api_error?.err_code === NO_MESSAGE_FOUND) return undefined;
      throw error;
    }
  };
  const startSelected = async (systems: readonly SystemName[]): Promise<SystemsStarted> => {
    const startedMs: Partial<Record<SystemName, number>> = {};
    const began = Date.now();
    await Promise.all([
      ...MIRROR_MAKERS.filter((system) => systems.includes(system)).map(async (system) => {
        // MirrorMaker reads its group filter only at start: replace the copying instance by one of the
        // same name (its Connect state and offset syncs carry over) that syncs the benchmark's groups.
        const old = mirrorMakers[system];
        replaced.push({ system, info: old });
        await stopMirrorMaker(old);
        const info = await startOne(system, { groups: true, dirSuffix: '-groups' });
        startedMs[system] = Date.now() - began;
        say(
          `MirrorMaker ${system} restarted with the benchmark's groups (pid ${info.pid}, ${startedMs[system]} ms)`,
        );
      }),
      ...(systems.includes('offsetsync')
        ? [
            startServices().then(() => {
              startedMs.offsetsync = Date.now() - began;
            }),
          ]
        : []),
    ]);
    return { startedMs };
  };

  return {
    run,
    testbed,
    source: sourceAdapter,
    target: targetAdapter,
    sourceKafka,
    targetKafka,
    groupPrefix,
    targetTopic,
    mirrorMakers,
    nc,
    services,
    collectorHeartbeat,
    startLink,
    startSystems,
    stopOffsetsync,
  };
}

/**
 * Reads a target partition from `from` to its current end and appends the source index of each record
 * (undefined for the target's own) to `into`, which is indexed by target offset. Returns the high watermark.
 */
export async function readTargetPartition(
  target: KafkaAdapter,
  topic: string,
  partition: number,
  into: Array<number | undefined>,
): Promise<number> {
  for (;;) {
    const [answer] = await target.fetchRecords(
      [{ topic, partition, offset: into.length, maxBytes: 1 << 20 }],
      {
        isolation: 'read_uncommitted',
        maxWaitMs: 0,
      },
    );
    if (answer === undefined) throw new Error(`no fetch answer for ${topic}/${partition}`);
    if (answer.error) throw answer.error;
    const requested = into.length;
    for (const record of answer.records) {
      while (into.length < record.offset) into.push(undefined);
      into.push(sourceIndexOf(record.value?.toString()));
    }
    while (into.length < answer.nextOffset) into.push(undefined);
    if (into.length >= answer.highWatermark || into.length === requested) return answer.highWatermark;
  }
}

/** The target's committed offsets of a group for one topic, by partition. */
export async function committedOn(
  adapter: KafkaAdapter,
  group: string,
  topic: string,
): Promise<Map<number, number>> {
  const offsets = await adapter.fetchCommittedOffsets(group, [topic]);
  return new Map(offsets.filter((o) => o.offset >= 0).map((o) => [o.partition, o.offset]));
}

/**
 * Reads group number `g` of `ledger`'s committed offsets of `topic` on a target and hands each
 * partition's source position (by record identity: `copy[p]` maps target offsets to source records, all
 * `records` copied) to the ledger. False when the read failed: the caller counts it and polls the group
 * again in its next round.
 */
export async function observeGroup(
  ledger: BootstrapLedger,
  g: number,
  adapter: KafkaAdapter,
  topic: string,
  copy: ReadonlyArray<ReadonlyArray<number | undefined>>,
  records: number,
): Promise<boolean> {
  let committed: Map<number, number>;
  try {
    committed = await committedOn(adapter, ledger.groups[g] as string, topic);
  } catch {
    return false;
  }
  const atMs = Date.now();
  ledger.observe(g, atMs, (p) => {
    const offset = committed.get(p);
    return offset === undefined ? undefined : sourcePositionAt(copy[p]!, offset, true, records);
  });
  return true;
}
