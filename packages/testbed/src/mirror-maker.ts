// Apache Kafka MirrorMaker 2 in dedicated mode (`org.apache.kafka.connect.mirror.MirrorMaker`, what
// `connect-mirror-maker.sh` runs) as the replicator between the test bed's two clusters. offsetsync moves
// the consumer groups, so MirrorMaker only copies records: its own offset translation is switched off.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { javaArgs, log4jProperties } from './kafka-cluster.js';
import { isAlive, spawnDetached, stopProcess } from './processes.js';
import { GiveUp, waitFor } from './wait.js';

/** The main class of MirrorMaker 2's dedicated mode. */
const MIRROR_MAKER_MAIN_CLASS = 'org.apache.kafka.connect.mirror.MirrorMaker';

/** Keeps every topic name on the target as on the source (no `source.` prefix), as offsetsync expects. */
export const IDENTITY_REPLICATION_POLICY = 'org.apache.kafka.connect.mirror.IdentityReplicationPolicy';

/** MirrorMaker's own policy: `<source alias>.<topic>` on the target. */
export const DEFAULT_REPLICATION_POLICY = 'org.apache.kafka.connect.mirror.DefaultReplicationPolicy';

/** What MirrorMaker 2 replicates, and between which clusters. */
export interface MirrorMakerOptions {
  /** Bootstrap servers (`host:port`) of the cluster records are copied from. */
  sourceBootstrapServers: string;
  /** Bootstrap servers (`host:port`) of the cluster records are copied to. */
  targetBootstrapServers: string;
  /** Topics copied, by exact name (they become an anchored, escaped regex list). At least one. */
  topics: readonly string[];
  /** Cluster alias of the source in the properties. Default: `source`. */
  sourceAlias?: string;
  /** Cluster alias of the target in the properties. Default: `target`. */
  targetAlias?: string;
  /**
   * Names MirrorMaker's Connect group and internal topics on the target (`mm2-<name>-offsets`, ...), so a
   * MirrorMaker started later against the same cluster does not resume the stored state of this one.
   * Letters, digits, `.`, `_`, `-`. Default: `offsetsync`.
   */
  instanceName?: string;
  /**
   * Topic names on the target: `identity` keeps them (what offsetsync expects), `default` is MirrorMaker's
   * own `DefaultReplicationPolicy` (`<source alias>.<topic>`), which lets a second MirrorMaker copy the
   * same topic to the same target without writing into the first one's copy. Default: `identity`.
   */
  replicationPolicy?: 'identity' | 'default';
  /**
   * Switches MirrorMaker's own offset translation on (offset syncs, checkpoints and
   * `sync.group.offsets.enabled`) for the groups matching `groups`. Default: off (MirrorMaker only copies
   * records; offsetsync moves the groups).
   */
  offsetTranslation?: MirrorMakerOffsetTranslation;
  /** Further `key = value` lines, written last so they override the defaults. Default: none. */
  overrides?: Readonly<Record<string, string>>;
}

/** MirrorMaker 2's own consumer group offset translation (checkpoint connector). */
export interface MirrorMakerOffsetTranslation {
  /** Java regular expressions of the groups MirrorMaker checkpoints and commits on the target. At least one. */
  groups: readonly string[];
  /** `emit.checkpoints.interval.seconds`. Default: MirrorMaker's, 60. */
  checkpointIntervalSeconds?: number;
  /** `sync.group.offsets.interval.seconds`. Default: MirrorMaker's, 60. */
  syncGroupOffsetsIntervalSeconds?: number;
  /** `offset.lag.max`: records between two offset syncs at most. Default: MirrorMaker's, 100. */
  offsetLagMax?: number;
}

/** The settings that turn MirrorMaker's offset translation on, each explained (pure; exported for tests). */
function offsetTranslationLines(
  translation: MirrorMakerOffsetTranslation | undefined,
): Array<[string, string] | string> {
  if (translation === undefined)
    return [
      '# offsetsync translates and commits the groups; MirrorMaker only copies records. With offset syncs',
      '# off it writes no offset-syncs topic (then no offset-syncs.* setting may be given). Its checkpoint',
      '# connector then refuses its own config: MirrorMaker logs that once as an ERROR',
      '# ("Failed to configure MirrorCheckpointConnector") and runs the other connectors.',
      ['emit.offset-syncs.enabled', 'false'],
      ['emit.checkpoints.enabled', 'false'],
      ['sync.group.offsets.enabled', 'false'],
    ];
  if (translation.groups.length === 0)
    throw new Error('MirrorMaker offset translation needs at least one group');
  const seconds = (name: string, value: number | undefined): void => {
    if (value !== undefined && !(Number.isInteger(value) && value > 0))
      throw new Error(`${name} must be a positive whole number of seconds: ${value}`);
  };
  seconds('checkpointIntervalSeconds', translation.checkpointIntervalSeconds);
  seconds('syncGroupOffsetsIntervalSeconds', translation.syncGroupOffsetsIntervalSeconds);
  const lag = translation.offsetLagMax;
  if (lag !== undefined && !(Number.isInteger(lag) && lag >= 0))
    throw new Error(`offsetLagMax must be a whole number >= 0: ${lag}`);
  const lines: Array<[string, string] | string> = [
    '# MirrorMaker translates and commits the groups itself: the source connector writes offset syncs,',
    '# the checkpoint connector turns them into checkpoints and commits them to the target groups.',
    ['emit.offset-syncs.enabled', 'true'],
    ['emit.checkpoints.enabled', 'true'],
    ['sync.group.offsets.enabled', 'true'],
    ['groups', translation.groups.map(propertiesValue).join(',')],
    ['offset-syncs.topic.replication.factor', '1'],
  ];
  if (translation.checkpointIntervalSeconds !== undefined)
    lines.push(['emit.checkpoints.interval.seconds', String(translation.checkpointIntervalSeconds)]);
  if (translation.syncGroupOffsetsIntervalSeconds !== undefined)
    lines.push(['sync.group.offsets.interval.seconds', String(translation.syncGroupOffsetsIntervalSeconds)]);
  if (lag !== undefined) lines.push(['offset.lag.max', String(lag)]);
  return lines;
}

/** A running MirrorMaker 2 process. */
export interface MirrorMakerInfo {
  /** Pid of the JVM; it leads its own process group. */
  pid: number;
  dir: string;
  propertiesFile: string;
  /** MirrorMaker's log4j log. */
  logFile: string;
  /** Milliseconds from launch until MirrorMaker reported that it started. */
  startedMs: number;
}

/**
 * The `mm2.properties` for a one-way copy from `source` to `target`. Every setting is explained in the
 * returned text, which is what an operator reads in the sandbox's work folder.
 */
export function mirrorMakerProperties(options: MirrorMakerOptions): string {
  const source = options.sourceAlias ?? 'source';
  const target = options.targetAlias ?? 'target';
  const name = options.instanceName ?? 'offsetsync';
  if (options.topics.length === 0) throw new Error('MirrorMaker needs at least one topic to copy');
  if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new Error(`invalid MirrorMaker instance name ${name}`);
  const herder = `${source}->${target}`;
  const topics = options.topics.map((topic) => propertiesValue(`^${escapeRegex(topic)}$`)).join(',');
  const lines: Array<[string, string] | string> = [
    '# MirrorMaker 2, dedicated mode, written by offsetsync (packages/testbed/src/mirror-maker.ts).',
    `# Run as: java -cp <kafka libs>/* ${MIRROR_MAKER_MAIN_CLASS} <this file>`,
    ['clusters', `${source}, ${target}`],
    [`${source}.bootstrap.servers`, options.sourceBootstrapServers],
    [`${target}.bootstrap.servers`, options.targetBootstrapServers],
    '# One direction only.',
    [`${source}->${target}.enabled`, 'true'],
    [`${target}->${source}.enabled`, 'false'],
    [`${source}->${target}.topics`, topics],
    ...(options.replicationPolicy === 'default'
      ? [
          `# Topics become ${source}.<topic> on the target (MirrorMaker's default replication policy).`,
          ['replication.policy.class', DEFAULT_REPLICATION_POLICY] as [string, string],
        ]
      : [
          '# Topic names stay the same on the target, so the group moves to the same topic names.',
          ['replication.policy.class', IDENTITY_REPLICATION_POLICY] as [string, string],
        ]),
    ...offsetTranslationLines(options.offsetTranslation),
    '# No heartbeats topic; with heartbeats off no herder runs for the disabled direction either.',
    ['emit.heartbeats.enabled', 'false'],
    '# The brokers run without an authorizer: no ACLs to sync. Topic configs are not synced either (the',
    '# target topic keeps the broker defaults, CreateTime timestamps included): altering them fails here.',
    ['sync.topic.acls.enabled', 'false'],
    ['sync.topic.configs.enabled', 'false'],
    '# Single-node clusters: one replica of the copied topics and of every internal topic.',
    ['replication.factor', '1'],
    ['checkpoints.topic.replication.factor', '1'],
    ['heartbeats.topic.replication.factor', '1'],
    ['offset.storage.replication.factor', '1'],
    ['config.storage.replication.factor', '1'],
    ['status.storage.replication.factor', '1'],
    '# The same for the plugins MirrorMaker itself loads.',
    ['plugin.discovery', 'service_load'],
    `# The Connect worker copying ${herder} keeps its state on the target under names of its own.`,
    [`${target}.group.id`, `mm2-${name}`],
    ['offset.storage.topic', `mm2-${name}-offsets`],
    ['config.storage.topic', `mm2-${name}-configs`],
    ['status.storage.topic', `mm2-${name}-status`],
    "# The worker takes its other settings from the target cluster's: every connector jar has a",
    '# ServiceLoader manifest, so skip the reflective classpath scan (15 to 35 s here); commit progress',
    '# every second; no delay for a worker that left.',
    [`${target}.plugin.discovery`, 'service_load'],
    [`${target}.offset.flush.interval.ms`, '1000'],
    [`${target}.scheduled.rebalance.max.delay.ms`, '0'],
    '# Quick to notice new topics, for a sandbox rather than production.',
    ['refresh.topics.interval.seconds', '1'],
    ['refresh.groups.interval.seconds', '1'],
    ['tasks.max', '1'],
  ];
  const overrides = Object.entries(options.overrides ?? {});
  if (overrides.length > 0) lines.push('# Overrides.', ...overrides);
  return `${lines.map((line) => (typeof line === 'string' ? line : `${line[0]} = ${line[1]}`)).join('\n')}\n`;
}

/** Escapes the characters a Java regular expression gives a meaning (topic names may contain `.`). */
export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A value as a Java properties file reads it back: backslashes doubled. */
function propertiesValue(value: string): string {
  return value.replaceAll('\\', '\\\\');
}

/**
 * Writes `mm2.properties` into `dir` and starts MirrorMaker 2 in dedicated mode, detached in its own
 * process group, logging to `dir/mirror-maker.log`. Resolves once MirrorMaker logged that it started
 * (its connectors then still join their group and start copying: wait for the records, not for this).
 */
export async function startMirrorMaker(
  options: MirrorMakerOptions & { dir: string; libDir: string; readyTimeoutMs?: number },
): Promise<MirrorMakerInfo> {
  const { dir } = options;
  await mkdir(dir, { recursive: true });
  const propertiesFile = join(dir, 'mm2.properties');
  const log4jFile = join(dir, 'log4j2.properties');
  const logFile = join(dir, 'mirror-maker.log');
  await writeFile(propertiesFile, mirrorMakerProperties(options));
  await writeFile(log4jFile, log4jProperties(logFile));
  const began = Date.now();
  const pid = spawnDetached(
    'java',
    [...javaArgs(options.libDir, log4jFile), MIRROR_MAKER_MAIN_CLASS, propertiesFile],
    join(dir, 'stdout.log'),
  );
  try {
    await waitFor(
      `MirrorMaker 2 (pid ${pid}) to start`,
      async () => {
        const log = await readFile(logFile, 'utf8').catch(() => '');
        if (!isAlive(pid)) throw new GiveUp(`MirrorMaker ${pid} exited; log tail:\n${log.slice(-3000)}`);
        return log.includes('Kafka MirrorMaker started') ? true : undefined;
      },
      { timeoutMs: options.readyTimeoutMs ?? 90_000, intervalMs: 100 },
    );
  } catch (error: unknown) {
    await stopProcess(pid, { group: true, graceMs: 5_000 });
    throw error;
  }
  return { pid, dir, propertiesFile, logFile, startedMs: Date.now() - began };
}

/** Stops MirrorMaker and anything in its process group: SIGTERM, SIGKILL after `graceMs` (default 20 s). */
export async function stopMirrorMaker(
  info: MirrorMakerInfo,
  options: { graceMs?: number } = {},
): Promise<void> {
  await stopProcess(info.pid, { group: true, graceMs: options.graceMs ?? 20_000 });
}
