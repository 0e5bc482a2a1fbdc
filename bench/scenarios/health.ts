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
import { groupName, VersionClock, type HealthWorkloadShape } from '../support/health-workload.js';
import { MeasuredHealth, type HealthSetup } from '../support/measured-health.js';
import { cpuSeconds } from '../support/process-stats.js';

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
    const { values } = parseArgs({
      args: [...args],
      options: {
        help: { type: 'boolean' },
        'no-gc-trace': { type: 'boolean' },
        ...Object.fromEntries(
          Object.entries(HEALTH_BENCH_DEFAULTS).map(([name, value]) => [name, { type: 'string', default: value }]),
        ),
      },
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
    cleanup.failed = false;
  } catch (error: unknown) {
    if (!interrupted()) say(error instanceof Error ? (error.stack ?? error.message) : String(error));
  } finally {
    await cleanup.run();
  }
  if (result === undefined) return 1;
  // Printed after the cleanup, so that it is the last line.
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return 0;
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

/** What a replay measured: the start of one health process until it served. */
async function measureReplay(health: MeasuredHealth, sentinel: Sentinel, marker: number, timeoutMs: number) {
  const load = loadAvg();
  const replayMs = await health.untilServing(timeoutMs);
  const cpu = health.cpuSeconds();
  const rss = health.rssMb();
  // Health serves once it read what the streams held when it started, the sentinel included.
  const complete = await sentinel.isRead(health, marker);
  say(
    `  served after ${replayMs} ms: cpu ${round2(cpu)} s, rss ${Math.round(rss)} MB (peak ${Math.round(health.rssPeakMb())} MB), everything read: ${complete}; load ${load.join(' ')}`,
  );
  return {
    replay_ms: replayMs,
    cpu_seconds: round2(cpu),
    rss_mb_at_serving: round1(rss),
    rss_mb_peak: round1(health.rssPeakMb()),
    everything_read_at_serving: complete,
    load_avg_at_start: load,
  };
}

async function measure(settings: HealthBenchSettings, cleanup: Cleanup): Promise<Record<string, unknown>> {
  const loadAtStart = loadAvg();
  const began = performance.now();
  const groupPartitions = settings.groups * settings.partitions;
  say(`${cpus().length} cores, load average ${loadAtStart.join(' ')}`);
  say(
    `${groupPartitions} group partitions (${settings.groups} groups x ${settings.partitions} partitions over ${settings.topics} topics), one link`,
  );

  const dir = await mkdtemp(join(tmpdir(), 'offsetsync-bench-health-'));
  cleanup.push('remove the nats-server store', () => rm(dir, { recursive: true, force: true }));
  const nats = await startNatsServer({ dir });
  cleanup.push(`stop nats-server ${nats.pid}`, () => stopProcess(nats.pid));
  say(`nats-server ${nats.url} (pid ${nats.pid})`);
  const nc = await connect({ servers: nats.url });
  cleanup.push('close the NATS connection', () => nc.close());
  const jsm = await nc.jetstreamManager();
  const run = randomBytes(3).toString('hex');
  const names = new Names(`bench_health_${run}`);
  await provisionStreams(jsm, streamSpecs(names, 1));
  const publisher = new JetStreamPublisher(nc, { timeoutMs: 60_000 });
  cleanup.push('close the publisher', async () => publisher.close());

  const heartbeatIntervalMs = 1_000;
  const shape: HealthWorkloadShape = {
    names,
    source: 'source',
    target: 'target',
    partitions: settings.partitions,
    topics: settings.topics,
  };
  const stopBeats = startHeartbeats(publisher, shape, heartbeatIntervalMs, say);
  cleanup.push('stop the heartbeats', async () => stopBeats());
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
  let marker = await sentinel.publish();
  const seedSeconds = (performance.now() - seedStart) / 1_000;
  const seeded = {
    events: ctx.pump.published,
    seconds: round1(seedSeconds),
    events_per_sec: Math.round(ctx.pump.published / seedSeconds),
    nats_cpu_seconds: round2((cpuSeconds(nats.pid) ?? 0) - seedNatsCpu),
    streams: await streamSizes(jsm, names),
  };
  say(`published ${seeded.events} events in ${seeded.seconds} s (${seeded.events_per_sec}/s); load ${loadAvg().join(' ')}`);

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
    MeasuredHealth.start(await setup(forget), { gcTrace: settings.gcTrace, apiDeadlineMs: 60_000, cleanup });
  const replayTimeoutMs = settings.replayTimeoutSeconds * 1_000;

  // 2. Health with its default settings: the replay, at rest, its API, under a trickle.
  say('starting health (default settings)');
  const health = await start();
  const replay = await measureReplay(health, sentinel, marker, replayTimeoutMs);
  const servedAtAge = health.sinceSpawnMs();
  const cpuBeforeSettle = health.cpuSeconds();
  await sleep(settings.settleSeconds * 1_000);
  const settled = {
    seconds: settings.settleSeconds,
    rss_mb: round1(health.rssMb()),
    cpu_seconds: round2(health.cpuSeconds() - cpuBeforeSettle),
  };
  say(`  after ${settings.settleSeconds} s at rest: rss ${Math.round(settled.rss_mb)} MB, cpu ${settled.cpu_seconds} s`);
  const restAge = health.sinceSpawnMs();

  say('API at rest: walking every ListGroups page, then rounds of ListLinks, GetGroup, first and middle page');
  const walk = await walkListing(health.client, settings.groups + 1);
  say(`  ${walk.groups} groups on ${walk.pages} pages in ${walk.total_ms} ms; load ${loadAvg().join(' ')}`);
  const atRest = new ProbeSamples();
  for (let i = 0; i < settings.probes; i++)
    atRest.add(await probeOnce(health.client, shape, ctx.population.pick(ctx.random), walk.middleToken));
  const restLatencies = atRest.summary();
  const apiAge = health.sinceSpawnMs();

  say(`trickle: ${settings.trickleRate} events/s for ${settings.trickleSeconds} s; load ${loadAvg().join(' ')}`);
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
    const churning = await start(settings.forgetDeletedAfterMs);
    const replayAgain = await measureReplay(churning, sentinel, marker, replayTimeoutMs);
    const rounds: ChurnRoundFigures[] = [];
    const firstDeleted: number[] = [];
    for (let round = 1; round <= settings.churnRounds; round++) {
      const before = new Set(ctx.population.live);
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
      if (round === 1) firstDeleted.push(...[...before].filter((g) => !ctx.population.live.includes(g)).slice(0, 1));
      rounds.push(figures);
      say(
        `  round ${round}: -${figures.deleted_groups} +${figures.added_groups} groups (${figures.groups_ever} ever), read in ${figures.published_and_read_ms} ms, a deleted group forgotten after ${figures.forgotten_after_ms ?? 'never'} ms, rss ${Math.round(figures.rss_mb)} MB; load ${figures.load_avg.join(' ')}`,
      );
    }
    const listed = await walkListing(churning.client, settings.groups + 1);
    const gcChurn = await churning.gcEvents();
    churn = {
      forget_deleted_after_ms: settings.forgetDeletedAfterMs,
      replay_again: replayAgain,
      rounds,
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
    marker = await sentinel.publish();
    const restarted = await start(settings.forgetDeletedAfterMs);
    const replayAfterChurn = await measureReplay(restarted, sentinel, marker, replayTimeoutMs);
    let forgottenAfterMs: number | null = null;
    const probe = firstDeleted[0];
    const since = performance.now();
    while (probe !== undefined && performance.now() - since < settings.forgetDeletedAfterMs + FORGET_GRACE_MS) {
      try {
        await restarted.client.getGroup(shape.source, shape.target, groupName(probe));
      } catch (error: unknown) {
        if (!isNotFound(error)) throw error;
        forgottenAfterMs = Math.round(performance.now() - since);
        break;
      }
      await sleep(250);
    }
    await sleep(2_000);
    const relisted = await walkListing(restarted.client, settings.groups + 1);
    restart = {
      ...replayAfterChurn,
      deleted_group_forgotten_after_serving_ms: forgottenAfterMs,
      rss_mb_after_forgetting: round1(restarted.rssMb()),
      groups_listed: relisted.groups,
      gc: summarizeGc(await restarted.gcEvents()),
      exit_code: await restarted.stop(),
    };
    say(
      `  restarted health forgot the deleted groups ${forgottenAfterMs ?? 'never'} ms after serving; rss ${restart.rss_mb_after_forgetting} MB, ${relisted.groups} groups listed`,
    );
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
    rss_mb: {
      after_replay: replay.rss_mb_at_serving,
      peak: replay.rss_mb_peak,
      settled: settled.rss_mb,
      after_trickle: trickled.rss_mb.end,
      after_churn_rounds: churnRounds.map((r) => r.rss_mb),
      after_restart_after_churn: restart?.rss_mb_after_forgetting ?? null,
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
