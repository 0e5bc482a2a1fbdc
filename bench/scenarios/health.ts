// `health`: the health service's memory and CPU with many group partitions known to it (issue 16). A
// private nats-server only (health reads nothing but NATS): the streams are filled with the events of
// 1,000,000 group partitions by default, as the collector, translator and committer of one link would
// have published them, and the real health process (services/health/dist/main.js) replays them. Measured:
// the time until its API serves, its RSS and CPU through the replay, at rest and under a trickle of new
// commits, the latency of its API, and its RSS as groups are deleted and new ones come, with health
// forgetting the deleted ones after `health.forgetDeletedGroupAfterMs`. See docs/benchmarks.md.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { connect, type JetStreamManager } from 'nats';
import { Names } from '@offsetsync/contracts';
import { JetStreamPublisher, provisionStreams, streamSpecs } from '@offsetsync/jetstream';
import { Cleanup, stopOnSignals } from '@offsetsync/harness';
import { freePort, startNatsServer, stopProcess } from '@offsetsync/testbed';
import { seededRandom } from '../support/commit-workload.js';
import { EventPump, startHeartbeats } from '../support/event-pump.js';
import { summarizeGc, type GcEvent } from '../support/gc-trace.js';
import { GroupPopulation } from '../support/group-churn.js';
import { isNotFound } from '../support/health-api-client.js';
import { probeOnce, ProbeSamples, walkListing } from '../support/health-api-probes.js';
import {
  brief,
  churnRound,
  publishGroups,
  Sentinel,
  trickle,
  type ChurnRoundFigures,
  type HealthBenchContext,
} from '../support/health-phases.js';
import {
  HEALTH_BENCH_DEFAULTS,
  healthBenchSettings,
  type HealthBenchOptions,
  type HealthBenchSettings,
} from '../support/health-settings.js';
import { VersionClock, type HealthWorkloadShape } from '../support/health-workload.js';
import { MeasuredHealth, type HealthSetup } from '../support/measured-health.js';
import { cpuSeconds } from '../support/process-stats.js';
import { timeConsumerCreates } from '../support/consumer-create-probe.js';

const HELP = `Usage: npm run -s bench -- --scenario health [options]

  --groups <n>                 consumer groups (default ${HEALTH_BENCH_DEFAULTS.groups})
  --partitions <n>             partitions each group commits (default ${HEALTH_BENCH_DEFAULTS.partitions})
  --topics <n>                 topics the groups spread over (default ${HEALTH_BENCH_DEFAULTS.topics})
  --trickle-rate <n>           events/s after the replay: commits of random group partitions, each
                               committed + translated + applied (default ${HEALTH_BENCH_DEFAULTS['trickle-rate']})
  --trickle-seconds <n>        how long (default ${HEALTH_BENCH_DEFAULTS['trickle-seconds']})
  --churn-rounds <n>           rounds of groups deleted and new ones added; 0 skips the churn phase and
                               the restart after it (default ${HEALTH_BENCH_DEFAULTS['churn-rounds']})
  --churn-fraction <f>         share of the live groups each round deletes, and adds anew (default ${HEALTH_BENCH_DEFAULTS['churn-fraction']})
  --forget-deleted-after <d>   health.forgetDeletedGroupAfterMs of the churn phase's health (default ${HEALTH_BENCH_DEFAULTS['forget-deleted-after']};
                               the first health runs with the service's default)
  --settle <s>                 rest after the replay before memory is read again (default ${HEALTH_BENCH_DEFAULTS.settle})
  --probes <n>                 rounds of API calls at rest (default ${HEALTH_BENCH_DEFAULTS.probes})
  --in-flight <n>              publishes awaiting acknowledgement at once (default ${HEALTH_BENCH_DEFAULTS['in-flight']})
  --seed <n>                   random seed of the trickle and the churn (default ${HEALTH_BENCH_DEFAULTS.seed})
  --no-gc-trace                run health without --trace-gc (no V8 heap figures)
  --replay-timeout <s>         longest wait for health to serve (default ${HEALTH_BENCH_DEFAULTS['replay-timeout']})

Needs nats-server on PATH (or NATS_SERVER_BIN); no Kafka. BENCH_NODE_ARGS adds Node.js options to health.
See docs/benchmarks.md, "health: memory and CPU with many group partitions".
`;

function say(line: string): void {
  process.stderr.write(`health: ${line}\n`);
}

const round1 = (v: number): number => Math.round(v * 10) / 10;
const round2 = (v: number): number => Math.round(v * 100) / 100;
const loadAvg = (): number[] => loadavg().map(round2);
/** How long health may take to read what was just published before the run gives up. */
const CATCH_UP_TIMEOUT_MS = 600_000;
/** After its deletion, how long past the forget window a deleted group may still be known. */
const FORGET_GRACE_MS = 90_000;

export async function runHealth(args: readonly string[]): Promise<number> {
  let settings: HealthBenchSettings;
  try {
    const strings = Object.fromEntries(
      Object.entries(HEALTH_BENCH_DEFAULTS).map(([name, value]) => [
        name,
        { type: 'string' as const, default: value as string },
      ]),
    );
    const { values } = parseArgs({
      args: [...args],
      options: { help: { type: 'boolean' }, 'no-gc-trace': { type: 'boolean' }, ...strings },
    });
    if (values.help === true) {
      process.stdout.write(HELP);
      return 0;
    }
    settings = healthBenchSettings(values as unknown as HealthBenchOptions);
  } catch (error: unknown) {
    process.stderr.write(`${(error as Error).message}\n${HELP}`);
    return 2;
  }
  const cleanup = new Cleanup(say);
  const interrupted = stopOnSignals(cleanup, say);
  let result: Record<string, unknown> | undefined;
  try {
    result = await measure(settings, cleanup);
    // A health that could not start is the run's one failing check; logs are kept.
    cleanup.failed = result.all_starts_served !== true;
  } catch (error: unknown) {
    if (!interrupted()) say(error instanceof Error ? (error.stack ?? error.message) : String(error));
  } finally {
    await cleanup.run();
  }
  if (result === undefined) return 1;
  // Printed after the cleanup, so that it is the last line.
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return result.all_starts_served === true ? 0 : 1;
}

/** Messages and bytes of each stream health reads. */
async function streamSizes(jsm: JetStreamManager, names: Names) {
  const sizes: Record<string, { messages: number; mb: number }> = {};
  for (const kind of ['committed', 'translated', 'applied'] as const) {
    const { state } = await jsm.streams.info(names.stream(kind));
    sizes[kind] = { messages: state.messages, mb: round1(state.bytes / 1024 / 1024) };
  }
  return sizes;
}

/** The GC figures of one health process between two of its ages (ms since spawn). */
function gcBetween(events: readonly GcEvent[], fromMs: number, toMs: number) {
  return summarizeGc(events.filter((e) => e.atMs >= fromMs && e.atMs < toMs));
}

/** A start of health that ended with the process gone before it served. */
interface FailedStart {
  after_ms: number;
  exit_code: number | null;
  reason: string;
  rss_mb_peak: number;
  load_avg_at_start: number[];
}

/** What a replay measured: from the spawn of a health process until it served. */
interface ReplayFigures {
  replay_ms: number;
  cpu_seconds: number;
  rss_mb_at_serving: number;
  rss_mb_peak: number;
  /** Whether health had read the sentinel published last before it started: the whole replay. */
  everything_read_at_serving: boolean;
  load_avg_at_start: number[];
  failed_starts: FailedStart[];
}

type Started =
  | { served: true; health: MeasuredHealth; replay: ReplayFigures }
  | { served: false; failedStarts: FailedStart[] };

/**
 * Starts health until one start serves, at most `attempts` times (an orchestrator would restart a
 * process that exited): that process, what its replay measured, and the starts that failed before.
 */
async function startUntilServing(
  start: () => Promise<MeasuredHealth>,
  sentinel: Sentinel,
  options: { timeoutMs: number; attempts: number },
): Promise<Started> {
  const failedStarts: FailedStart[] = [];
  for (let attempt = 1; attempt <= options.attempts; attempt++) {
    const load = loadAvg();
    const health = await start();
    const outcome = await health.untilServing(options.timeoutMs);
    if (!outcome.served) {
      failedStarts.push({
        after_ms: outcome.afterMs,
        exit_code: outcome.exitCode,
        reason: outcome.reason,
        rss_mb_peak: round1(health.rssPeakMb()),
        load_avg_at_start: load,
      });
      say(`  health exited ${outcome.afterMs} ms after its start (${outcome.exitCode}): ${outcome.reason}`);
      await health.stop();
      continue;
    }
    const cpu = health.cpuSeconds();
    const rss = health.rssMb();
    // Health serves once it read what the streams held when it started, the sentinel included.
    const complete = await sentinel.isRead(health, sentinel.last);
    say(
      `  served after ${outcome.ms} ms: cpu ${round2(cpu)} s, rss ${Math.round(rss)} MB (peak ${Math.round(health.rssPeakMb())} MB), everything read: ${complete}; load ${load.join(' ')}`,
    );
    const replay: ReplayFigures = {
      replay_ms: outcome.ms,
      cpu_seconds: round2(cpu),
      rss_mb_at_serving: round1(rss),
      rss_mb_peak: round1(health.rssPeakMb()),
      everything_read_at_serving: complete,
      load_avg_at_start: load,
      failed_starts: failedStarts,
    };
    return { served: true, health, replay };
  }
  return { served: false, failedStarts };
}

/** The served start of {@link startUntilServing}; a health that never served ends the run. */
async function servingHealth(
  ...args: Parameters<typeof startUntilServing>
): Promise<Extract<Started, { served: true }>> {
  const started = await startUntilServing(...args);
  if (!started.served)
    throw new Error(
      `health exited during each of its ${started.failedStarts.length} starts: ${started.failedStarts.map((f) => f.reason).join('; ')}`,
    );
  return started;
}

/**
 * Milliseconds until GetGroup answers NOT_FOUND for `group` (health forgot it), asked every 250 ms;
 * null when it still knows it after `timeoutMs` or there is no group to ask about.
 */
async function untilForgotten(
  health: MeasuredHealth,
  link: { source: string; target: string },
  group: string | null,
  timeoutMs: number,
): Promise<number | null> {
  const since = performance.now();
  while (group !== null && performance.now() - since < timeoutMs) {
    try {
      await health.client.getGroup(link.source, link.target, group);
    } catch (error: unknown) {
      if (!isNotFound(error)) throw error;
      return Math.round(performance.now() - since);
    }
    await sleep(250);
  }
  return null;
}

/** Starts of health the run makes before it gives up on one (a crash during the start is a finding). */
const START_ATTEMPTS = 3;

async function measure(settings: HealthBenchSettings, cleanup: Cleanup): Promise<Record<string, unknown>> {
  const loadAtStart = loadAvg();
  const began = performance.now();
  const groupPartitions = settings.groups * settings.partitions;
  say(`${cpus().length} cores, load average ${loadAtStart.join(' ')}`);
  say(
    `${groupPartitions} group partitions (${settings.groups} groups x ${settings.partitions} partitions over ${settings.topics} topics), one link`,
  );

  const dir = await mkdtemp(join(tmpdir(), 'offsetsync-bench-health-'));
  cleanup.push('remove the nats-server store', async () => {
    if (cleanup.failed) say(`nats-server store and log kept in ${dir}`);
    else await rm(dir, { recursive: true, force: true });
  });
  const nats = await startNatsServer({ dir });
  cleanup.push(`stop nats-server ${nats.pid}`, () => stopProcess(nats.pid));
  say(`nats-server ${nats.url} (pid ${nats.pid})`);
  const nc = await connect({ servers: nats.url });
  cleanup.push('close the NATS connection', () => nc.close());
  const jsm = await nc.jetstreamManager();
  // For the bench's own questions about large streams: nats.js gives up on an API call after 5 s.
  const patientJsm = await nc.jetstreamManager({ timeout: 120_000 });
  const run = randomBytes(3).toString('hex');
  const names = new Names(`bench_health_${run}`);
  await provisionStreams(jsm, streamSpecs(names, 1));
  const publisher = new JetStreamPublisher(nc, { timeoutMs: 60_000 });
  cleanup.push('close the publisher', () => Promise.resolve(publisher.close()));

  const heartbeatIntervalMs = 1_000;
  const shape: HealthWorkloadShape = {
    names,
    source: 'source',
    target: 'target',
    partitions: settings.partitions,
    topics: settings.topics,
  };
  const stopBeats = startHeartbeats(publisher, shape, heartbeatIntervalMs, say);
  cleanup.push('stop the heartbeats', () => Promise.resolve(stopBeats()));
  const ctx: HealthBenchContext = {
    shape,
    pump: new EventPump(publisher, { concurrency: settings.inFlight, chunk: settings.inFlight * 20 }),
    versions: new VersionClock(),
    population: new GroupPopulation(settings.groups),
    random: seededRandom(settings.seed),
    say,
  };
  const sentinel = new Sentinel(ctx);

  // 1. The streams, as the services would have left them.
  say(`publishing ${groupPartitions * 3} events (committed, translated, applied per group partition)`);
  const seedStart = performance.now();
  const seedNatsCpu = cpuSeconds(nats.pid) ?? 0;
  await publishGroups(ctx, [...ctx.population.live]);
  await sentinel.publish();
  const seedSeconds = (performance.now() - seedStart) / 1_000;
  const seeded = {
    events: ctx.pump.published,
    seconds: round1(seedSeconds),
    events_per_sec: Math.round(ctx.pump.published / seedSeconds),
    nats_cpu_seconds: round2((cpuSeconds(nats.pid) ?? 0) - seedNatsCpu),
    streams: await streamSizes(jsm, names),
    consumer_create_ms: await timeConsumerCreates(patientJsm, names),
  };
  say(
    `published ${seeded.events} events in ${seeded.seconds} s (${seeded.events_per_sec}/s); load ${loadAvg().join(' ')}`,
  );
  say(`nats-server created health's consumers in ${JSON.stringify(seeded.consumer_create_ms)} ms`);

  const setup = async (forgetDeletedGroupAfterMs?: number): Promise<HealthSetup> => ({
    natsUrl: nats.url,
    subjectPrefix: names.prefix,
    source: shape.source,
    target: shape.target,
    grpcPort: await freePort(),
    instanceId: `bench-health-${run}`,
    heartbeatIntervalMs,
    ...(forgetDeletedGroupAfterMs === undefined ? {} : { forgetDeletedGroupAfterMs }),
  });
  const start = async (forget?: number) =>
    MeasuredHealth.start(await setup(forget), {
      gcTrace: settings.gcTrace,
      apiDeadlineMs: 60_000,
      cleanup,
      say,
    });
  const replayTimeoutMs = settings.replayTimeoutSeconds * 1_000;

  // 2. Health with its default settings: the replay, at rest, its API, under a trickle.
  say('starting health (default settings)');
  const startOptions = { timeoutMs: replayTimeoutMs, attempts: START_ATTEMPTS };
  const first = await startUntilServing(start, sentinel, startOptions);
  if (!first.served) {
    // Health could not start on these streams at all: that is the result.
    return {
      bench: 'health',
      group_partitions: groupPartitions,
      groups: settings.groups,
      partitions: settings.partitions,
      all_starts_served: false,
      replay: { served: false, failed_starts: first.failedStarts },
      seed: seeded,
      seconds: Math.round((performance.now() - began) / 1_000),
      cores: cpus().length,
      load_avg_at_start: loadAtStart,
      load_avg_at_end: loadAvg(),
      node: process.version,
    };
  }
  const { health, replay } = first;
  const servedAtAge = health.sinceSpawnMs();
  const cpuBeforeSettle = health.cpuSeconds();
  await sleep(settings.settleSeconds * 1_000);
  const settled = {
    seconds: settings.settleSeconds,
    rss_mb: round1(health.rssMb()),
    cpu_seconds: round2(health.cpuSeconds() - cpuBeforeSettle),
  };
  say(
    `  after ${settings.settleSeconds} s at rest: rss ${Math.round(settled.rss_mb)} MB, cpu ${settled.cpu_seconds} s`,
  );
  const restAge = health.sinceSpawnMs();

  say(
    'API at rest: walking every ListGroups page, then rounds of ListLinks, GetGroup, first and middle page',
  );
  const walk = await walkListing(health.client, settings.groups + 1);
  say(`  ${walk.groups} groups on ${walk.pages} pages in ${walk.total_ms} ms; load ${loadAvg().join(' ')}`);
  const atRest = new ProbeSamples();
  for (let i = 0; i < settings.probes; i++)
    atRest.add(await probeOnce(health.client, shape, ctx.population.pick(ctx.random), walk.middleToken));
  const restLatencies = atRest.summary();
  const apiAge = health.sinceSpawnMs();

  say(
    `trickle: ${settings.trickleRate} events/s for ${settings.trickleSeconds} s; load ${loadAvg().join(' ')}`,
  );
  const trickleLoad = loadAvg();
  const trickled = await trickle(ctx, health, sentinel, {
    perSecond: settings.trickleRate,
    seconds: settings.trickleSeconds,
    deepToken: walk.middleToken,
    catchUpTimeoutMs: CATCH_UP_TIMEOUT_MS,
  });
  say(
    `  ${trickled.events} events at ${trickled.events_per_sec}/s: health cpu ${trickled.cpu_seconds} s (${Math.round(trickled.cpu_per_second.mean * 100)} % of a core), rss ${trickled.rss_mb.end} MB`,
  );
  const gcFirst = await health.gcEvents();
  const firstExit = await health.stop();

  // 3. Groups come and go, under a health that forgets deleted groups after the chosen window.
  let churn: Record<string, unknown> | undefined;
  let restart: Record<string, unknown> | undefined;
  if (settings.churnRounds > 0) {
    say(`starting health with forgetDeletedGroupAfterMs ${settings.forgetDeletedAfterMs} for the churn`);
    const forgetting = () => start(settings.forgetDeletedAfterMs);
    const { health: churning, replay: replayAgain } = await servingHealth(forgetting, sentinel, startOptions);
    const rounds: ChurnRoundFigures[] = [];
    for (let round = 1; round <= settings.churnRounds; round++) {
      const figures = await churnRound(
        ctx,
        churning,
        sentinel,
        {
          round,
          fraction: settings.churnFraction,
          forgetTimeoutMs: settings.forgetDeletedAfterMs + FORGET_GRACE_MS,
          catchUpTimeoutMs: CATCH_UP_TIMEOUT_MS,
          settleMs: 2_000,
        },
        loadAvg,
      );
      rounds.push(figures);
      say(
        `  round ${round}: -${figures.deleted_groups} +${figures.added_groups} groups (${figures.groups_ever} ever), read in ${figures.published_and_read_ms} ms, the last deleted group forgotten after ${figures.forgotten_after_ms ?? 'never'} ms, rss ${Math.round(figures.rss_mb)} MB, heap after the last full GC ${figures.heap_after_last_full_gc_mb ?? '-'} MB; load ${figures.load_avg.join(' ')}`,
      );
    }
    // At rest with a short window health sweeps for deleted groups every few seconds: what that costs.
    const idleCpuStart = churning.cpuSeconds();
    await sleep(settings.settleSeconds * 1_000);
    const idleAfterRounds = {
      seconds: settings.settleSeconds,
      cpu_seconds: round2(churning.cpuSeconds() - idleCpuStart),
    };
    say(`  at rest after the rounds: ${idleAfterRounds.cpu_seconds} cpu s in ${settings.settleSeconds} s`);
    const listed = await walkListing(churning.client, settings.groups + 1);
    const gcChurn = await churning.gcEvents();
    churn = {
      forget_deleted_after_ms: settings.forgetDeletedAfterMs,
      replay_again: replayAgain,
      rounds,
      idle_after_rounds: idleAfterRounds,
      rss_mb_after_rounds: round1(churning.rssMb()),
      rss_mb_peak: round1(churning.rssPeakMb()),
      groups_listed_after: listed.groups,
      groups_live_after: ctx.population.live.length + 1,
      listing_matches_live: listed.groups === ctx.population.live.length + 1,
      streams_after: await streamSizes(jsm, names),
      gc: summarizeGc(gcChurn),
      exit_code: await churning.stop(),
    };

    // 4. A restart after the churn: the streams still hold the deleted groups' last events.
    say('restarting health after the churn');
    const consumerCreateAfterChurn = await timeConsumerCreates(patientJsm, names);
    say(`  nats-server created health's consumers in ${JSON.stringify(consumerCreateAfterChurn)} ms`);
    const restarted = await startUntilServing(forgetting, sentinel, startOptions);
    if (!restarted.served) {
      // What the streams hold after the churn kept health from starting at all: a finding, not a
      // failure of the benchmark; the figures so far are reported.
      restart = {
        served: false,
        failed_starts: restarted.failedStarts,
        consumer_create_ms: consumerCreateAfterChurn,
      };
    } else {
      const again = restarted.health;
      const forgottenAfterMs = await untilForgotten(
        again,
        shape,
        rounds.at(-1)?.deleted_sample ?? null,
        settings.forgetDeletedAfterMs + FORGET_GRACE_MS,
      );
      await sleep(2_000);
      const relisted = await walkListing(again.client, settings.groups + 1);
      restart = {
        served: true,
        ...restarted.replay,
        consumer_create_ms: consumerCreateAfterChurn,
        deleted_group_forgotten_after_serving_ms: forgottenAfterMs,
        rss_mb_after_forgetting: round1(again.rssMb()),
        groups_listed: relisted.groups,
        gc: summarizeGc(await again.gcEvents()),
        exit_code: await again.stop(),
      };
      say(
        `  restarted health forgot the deleted groups ${forgottenAfterMs ?? 'never'} ms after serving; rss ${Math.round(again.rssPeakMb())} MB at its peak, ${relisted.groups} groups listed`,
      );
    }
  }

  const restLatency = (s: typeof restLatencies) => ({
    first_page: brief(s.list_groups_first_page),
    deep_page: brief(s.list_groups_deep_page),
  });
  const churnRounds = (churn?.rounds ?? []) as ChurnRoundFigures[];
  return {
    bench: 'health',
    group_partitions: groupPartitions,
    groups: settings.groups,
    partitions: settings.partitions,
    topics: settings.topics,
    replay_ms: replay.replay_ms,
    all_starts_served: restart?.served !== false,
    rss_mb: {
      after_replay: replay.rss_mb_at_serving,
      peak: replay.rss_mb_peak,
      settled: settled.rss_mb,
      after_trickle: trickled.rss_mb.end,
      after_churn_rounds: churnRounds.map((r) => r.rss_mb),
      after_restart_after_churn: (restart?.rss_mb_after_forgetting as number | undefined) ?? null,
    },
    cpu_seconds: {
      replay: replay.cpu_seconds,
      settle: settled.cpu_seconds,
      trickle: trickled.cpu_seconds,
    },
    list_groups_ms: { ...restLatency(restLatencies), walk_page: brief(walk.page_ms) },
    get_group_ms: brief(restLatencies.get_group),
    list_links_ms: brief(restLatencies.list_links),
    listing: { pages: walk.pages, groups: walk.groups, total_ms: walk.total_ms },
    replay,
    settled,
    trickle: {
      ...trickled,
      api_ms: {
        list_links: brief(trickled.api_ms.list_links),
        get_group: brief(trickled.api_ms.get_group),
        ...restLatency(trickled.api_ms),
      },
      load_avg_at_start: trickleLoad,
    },
    gc: {
      replay: gcBetween(gcFirst, 0, servedAtAge),
      settle: gcBetween(gcFirst, servedAtAge, restAge),
      api: gcBetween(gcFirst, restAge, apiAge),
      trickle: gcBetween(gcFirst, apiAge, Number.POSITIVE_INFINITY),
      all: summarizeGc(gcFirst),
    },
    exit_code: firstExit,
    seed: seeded,
    churn: churn ?? null,
    restart_after_churn: restart ?? null,
    seconds: Math.round((performance.now() - began) / 1_000),
    cores: cpus().length,
    load_avg_at_start: loadAtStart,
    load_avg_at_end: loadAvg(),
    node: process.version,
  };
}
