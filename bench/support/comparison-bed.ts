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
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { connect, type NatsConnection } from 'nats';
import pino from 'pino';
import { KafkaAdapter, Names, provisionStreams, streamSpecs } from '@offsetsync/common';
import {
  ensureKafkaDistribution,
  startMirrorMaker,
  stopMirrorMaker,
  type MirrorMakerInfo,
  type MirrorMakerOffsetTranslation,
} from '@offsetsync/testbed';
import { acquireTestbed, releaseTestbed, type BenchTestbed } from './bench-testbed.js';
import { sourceIndexOf } from './mm2-compare.js';
import { startBenchService, type BenchRole } from './service-process.js';

const { Kafka, logLevel } = kafkajs;

/** The systems compared; each commits its own groups on the target. */
export const SYSTEMS = ['offsetsync', 'mm2_default', 'mm2_tuned'] as const;
export type SystemName = (typeof SYSTEMS)[number];

/** The tuned MirrorMaker: what "tuned to 1 s" sets. */
export const MM2_TUNED: Omit<MirrorMakerOffsetTranslation, 'groups'> = {
  checkpointIntervalSeconds: 1,
  syncGroupOffsetsIntervalSeconds: 1,
  offsetLagMax: 0,
};

/** Source alias, and so the prefix the tuned MirrorMaker's default replication policy gives topic names. */
const SOURCE = 'source';
const TARGET = 'target';
const ROLES: readonly BenchRole[] = ['collector', 'translator', 'committer'];

/** Undo steps, run last registered first, once, whether the run ends, fails or is interrupted. */
export class Cleanup {
  private readonly steps: Array<{ what: string; run: () => Promise<unknown> }> = [];
  private running: Promise<void> | undefined;
  failed = true;

  constructor(private readonly say: (line: string) => void) {}

  push(what: string, run: () => Promise<unknown>): void {
    this.steps.push({ what, run });
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      for (const step of this.steps.reverse()) {
        try {
          await step.run();
        } catch (error: unknown) {
          this.say(`cleanup: ${step.what} failed: ${String(error)}`);
        }
      }
    })();
    return this.running;
  }
}

export interface ComparisonBed {
  run: string;
  testbed: BenchTestbed;
  source: KafkaAdapter;
  target: KafkaAdapter;
  sourceKafka: kafkajs.Kafka;
  targetKafka: kafkajs.Kafka;
  /** The group name prefix of each system. */
  groupPrefix: Record<SystemName, string>;
  /** The name on the target of a source topic, per system. */
  targetTopic(system: SystemName, topic: string): string;
  mirrorMakers: Record<'mm2_default' | 'mm2_tuned', MirrorMakerInfo>;
  nc: NatsConnection;
}

/**
 * Starts the test bed, creates `topics` on both clusters (the target's copies with `ownRecords(p)` records
 * of their own first, so no offset is the same on both), fills the source through `fill`, then starts both
 * MirrorMakers and the offsetsync services. Every step registers its undo on `cleanup`.
 */
export async function startComparisonBed(options: {
  say: (line: string) => void;
  cleanup: Cleanup;
  topics: readonly string[];
  partitions: number;
  ownRecords: (partition: number) => number;
  run?: string;
  fill: (producer: kafkajs.Producer) => Promise<void>;
}): Promise<ComparisonBed> {
  const { say, cleanup } = options;
  const run = options.run ?? randomBytes(3).toString('hex');
  const testbedStart = acquireTestbed({ log: (line) => say(`test bed: ${line}`) });
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
  const libDir = (await ensureKafkaDistribution()).libDir;
  const mirrorMakers = {} as Record<'mm2_default' | 'mm2_tuned', MirrorMakerInfo>;
  const mmStart = Date.now();
  await Promise.all(
    (['mm2_default', 'mm2_tuned'] as const).map(async (system) => {
      const instanceName = `bench-${system.replace('_', '-')}-${run}`;
      const dir = join(testbed.info.workDir, instanceName);
      const translation: MirrorMakerOffsetTranslation = {
        groups: [`${groupPrefix[system].replaceAll('-', '\\-')}.*`],
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
      cleanup.push(`stopping MirrorMaker ${system}`, async () => {
        await stopMirrorMaker(info);
        if (!cleanup.failed) await rm(dir, { recursive: true, force: true });
        else say(`MirrorMaker ${system} log kept in ${info.logFile}`);
      });
    }),
  );
  say(
    `MirrorMaker 2 default (pid ${mirrorMakers.mm2_default.pid}) and tuned (pid ${mirrorMakers.mm2_tuned.pid}) started in ${Date.now() - mmStart} ms`,
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
    logging: { level: 'warn' },
  };
  const sections: Record<BenchRole, Record<string, unknown>> = {
    collector: {
      collector: {
        cluster: SOURCE,
        consumerGroup: `offsetsync-bench-mm2-${run}`,
        groups: { include: [`^${groupPrefix.offsetsync}`] },
        coalesceWindowMs: '20ms',
      },
    },
    translator: { translator: { target: TARGET, pendingRetryMinMs: '100ms', pendingRetryMaxMs: '1s' } },
    committer: { committer: { target: TARGET } },
  };
  for (const role of ROLES) {
    const service = await startBenchService(role, {
      ...common,
      instance: { id: `bench-mm2-${role}` },
      ...sections[role],
    });
    cleanup.push(`stopping the ${role}`, async () => {
      await service.stop();
      if (cleanup.failed) say(`${role} config and log kept in ${service.dir}`);
      else await rm(service.dir, { recursive: true, force: true });
    });
  }
  say('offsetsync collector, translator and committer started');
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

/** Installs SIGINT/SIGTERM handlers that run the cleanup and exit 130. */
export function stopOnSignals(cleanup: Cleanup, say: (line: string) => void): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      say(`${signal}: stopping what the benchmark started`);
      void cleanup.run().finally(() => process.exit(130));
    });
  }
}
