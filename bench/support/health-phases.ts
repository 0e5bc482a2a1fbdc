// The phases of the health benchmark that feed health events: the initial groups, a steady trickle of
// new commits, and rounds of groups deleted and new ones added; and the sentinel that tells when health
// has read everything published before it.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LatencySummary } from './e2e-latency.js';
import { dueCount, type EventPump } from './event-pump.js';
import { summarizeGc } from './gc-trace.js';
import type { GroupPopulation } from './group-churn.js';
import { isNotFound } from './health-api-client.js';
import { PAGE_SIZE, probeOnce, ProbeSamples, type ApiLatencies } from './health-api-probes.js';
import {
  commitEvents,
  groupDeletionEvents,
  groupName,
  SENTINEL_GROUP,
  sentinelEvents,
  sentinelRead,
  type HealthWorkloadShape,
  type VersionClock,
} from './health-workload.js';
import type { MeasuredHealth } from './measured-health.js';

/** What every phase works with. */
export interface HealthBenchContext {
  shape: HealthWorkloadShape;
  pump: EventPump;
  versions: VersionClock;
  population: GroupPopulation;
  random: () => number;
  say: (line: string) => void;
}

const round1 = (v: number): number => Math.round(v * 10) / 10;

/** Publishes a commit of every partition of `groups` (committed, translated, applied each). */
export async function publishGroups(ctx: HealthBenchContext, groups: Iterable<number>): Promise<void> {
  const { shape, pump, versions, say } = ctx;
  let lastReport = performance.now();
  const started = lastReport;
  const before = pump.published;
  for (const group of groups) {
    const atMs = Date.now();
    for (let partition = 0; partition < shape.partitions; partition++) {
      const version = versions.take(group);
      await pump.add(commitEvents(shape, { group, partition, offset: version.offsetsOffset, version, atMs }));
    }
    if (performance.now() - lastReport >= 5_000) {
      lastReport = performance.now();
      const sent = pump.published - before;
      say(`  published ${sent} events (${Math.round(sent / ((lastReport - started) / 1_000))}/s)`);
    }
  }
  await pump.flush();
}

/** Publishes the deletion of each of `groups`, as the collector does when a group is deleted on the source. */
async function publishDeletions(ctx: HealthBenchContext, groups: Iterable<number>): Promise<void> {
  const { shape, pump, versions } = ctx;
  for (const group of groups) {
    const tombstones = Array.from({ length: shape.partitions + 1 }, () => versions.take(group));
    await pump.add(groupDeletionEvents(shape, group, tombstones, Date.now()));
  }
  await pump.flush();
}

/** Marks how far health has read: see {@link sentinelEvents}. */
export class Sentinel {
  private marker = 0;

  constructor(private readonly ctx: HealthBenchContext) {}

  /** The last marker published (0 before the first). */
  get last(): number {
    return this.marker;
  }

  /** Publishes the next marker, after everything published so far; returns it. */
  async publish(): Promise<number> {
    this.marker += 1;
    // The sentinel's own group index: any fixed one keeps its versions on one offsets partition.
    const version = this.ctx.versions.take(0);
    await this.ctx.pump.add(sentinelEvents(this.ctx.shape, this.marker, version, Date.now()));
    await this.ctx.pump.flush();
    return this.marker;
  }

  /** Whether health has read the three streams up to `marker`. */
  async isRead(health: MeasuredHealth, marker: number): Promise<boolean> {
    const { source, target } = this.ctx.shape;
    try {
      const { value } = await health.client.getGroup(source, target, SENTINEL_GROUP);
      return sentinelRead(value.partitions, marker);
    } catch (error: unknown) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  /** Waits until health has read up to `marker`; resolves with the milliseconds waited. */
  async untilRead(health: MeasuredHealth, marker: number, timeoutMs: number): Promise<number> {
    const started = performance.now();
    while (!(await this.isRead(health, marker))) {
      if (performance.now() - started > timeoutMs)
        throw new Error(`health did not read the sentinel ${marker} within ${timeoutMs} ms`);
      await sleep(50);
    }
    return Math.round(performance.now() - started);
  }
}

/** What the trickle phase measured. */
export interface TrickleFigures {
  seconds: number;
  events: number;
  events_per_sec: number;
  /** Health's CPU seconds from the first trickled event until it had read the last. */
  cpu_seconds: number;
  /** Health's CPU per second of the trickle, as a share of one core. */
  cpu_per_second: { mean: number; max: number };
  rss_mb: { start: number; max: number; end: number };
  /** The API under the trickle: one round of calls about every second. */
  api_ms: ApiLatencies;
  /** From the last trickled event until health had read it. */
  caught_up_ms: number;
}

/**
 * Trickles `perSecond` events for `seconds`: commits of random live group partitions (each three events:
 * committed, translated, applied). Every second health's RSS and CPU are sampled and its API probed.
 */
export async function trickle(
  ctx: HealthBenchContext,
  health: MeasuredHealth,
  sentinel: Sentinel,
  options: { perSecond: number; seconds: number; deepToken: string; catchUpTimeoutMs: number },
): Promise<TrickleFigures> {
  const { shape, pump, versions, population, random, say } = ctx;
  const cpuAtStart = health.cpuSeconds();
  const rssAtStart = health.rssMb();
  const durationMs = options.seconds * 1_000;
  const started = performance.now();
  let sent = 0;
  let done = false;

  const publishing = (async () => {
    try {
      for (let elapsed = 0; elapsed < durationMs; elapsed = performance.now() - started) {
        const updates = Math.ceil(dueCount(options.perSecond, elapsed, sent) / 3);
        const atMs = Date.now();
        for (let i = 0; i < updates; i++) {
          const group = population.pick(random);
          const partition = Math.floor(random() * shape.partitions);
          const version = versions.take(group);
          await pump.add(
            commitEvents(shape, { group, partition, offset: version.offsetsOffset, version, atMs }),
          );
        }
        await pump.flush();
        sent += updates * 3;
        await sleep(20);
      }
    } finally {
      done = true;
    }
  })();

  const cpuShares: number[] = [];
  const rss: number[] = [];
  const probes = new ProbeSamples();
  let lastCpu = cpuAtStart;
  let lastAt = performance.now();
  while (!done) {
    await Promise.race([sleep(1_000), publishing]);
    if (done) break;
    const now = performance.now();
    const cpu = health.cpuSeconds();
    cpuShares.push((cpu - lastCpu) / ((now - lastAt) / 1_000));
    lastCpu = cpu;
    lastAt = now;
    rss.push(health.rssMb());
    probes.add(await probeOnce(health.client, shape, population.pick(random), options.deepToken));
    const second = cpuShares.length;
    if (second % 5 === 0)
      say(
        `  trickle ${second} s: ${sent} events, health cpu ${Math.round((cpuShares.at(-1) ?? 0) * 100)} %, rss ${Math.round(rss.at(-1) ?? 0)} MB`,
      );
  }
  await publishing;
  const seconds = (performance.now() - started) / 1_000;
  const caughtUp = await sentinel.untilRead(health, await sentinel.publish(), options.catchUpTimeoutMs);
  const cpuSeconds = health.cpuSeconds() - cpuAtStart;
  return {
    seconds: round1(seconds),
    events: sent,
    events_per_sec: Math.round(sent / seconds),
    cpu_seconds: Math.round(cpuSeconds * 100) / 100,
    cpu_per_second: {
      mean: Math.round((cpuShares.reduce((a, b) => a + b, 0) / Math.max(1, cpuShares.length)) * 100) / 100,
      max: Math.round(Math.max(0, ...cpuShares) * 100) / 100,
    },
    rss_mb: {
      start: round1(rssAtStart),
      max: round1(Math.max(rssAtStart, ...rss)),
      end: round1(health.rssMb()),
    },
    api_ms: probes.summary(),
    caught_up_ms: caughtUp,
  };
}

/** What one round of churn measured. */
export interface ChurnRoundFigures {
  round: number;
  deleted_groups: number;
  added_groups: number;
  /** Groups ever created so far (live and deleted). */
  groups_ever: number;
  /** The last group the round deleted: the one asked about until health forgot it. */
  deleted_sample: string | null;
  /** Publishing the round's events until health had read them. */
  published_and_read_ms: number;
  /** The first ListGroups page right after groups were added, and the same page asked again at once. */
  list_groups_first_page_ms: { after_adds: number; again: number };
  /**
   * From the round's last deletion until GetGroup answered NOT_FOUND for that group (health forgot it,
   * and every group deleted before it); null when it still knew the group at the deadline.
   */
  forgotten_after_ms: number | null;
  rss_mb: number;
  /** V8 heap after health's last full collection so far (its live objects then), MB; null if none. */
  heap_after_last_full_gc_mb: number | null;
  /** Health's CPU seconds over the round, the wait for forgetting included. */
  cpu_seconds: number;
  load_avg: number[];
}

/**
 * One round of groups coming and going: deletes `fraction` of the live groups, adds as many new ones
 * (each partition committed, translated and applied), waits until health has read it all and then until
 * it forgets a deleted group (at most `forgetTimeoutMs` after the deletions), and samples its memory.
 */
export async function churnRound(
  ctx: HealthBenchContext,
  health: MeasuredHealth,
  sentinel: Sentinel,
  options: {
    round: number;
    fraction: number;
    forgetTimeoutMs: number;
    catchUpTimeoutMs: number;
    settleMs: number;
  },
  loadAvg: () => number[],
): Promise<ChurnRoundFigures> {
  const { shape, population, random } = ctx;
  const cpuAtStart = health.cpuSeconds();
  const started = performance.now();
  const { deleted, added } = population.churn(options.fraction, random);
  // The deletions last, so that health has read them well within the forget window and the wait for
  // their forgetting starts in time.
  await publishGroups(ctx, added);
  await publishDeletions(ctx, deleted);
  const deletedAt = performance.now();
  await sentinel.untilRead(health, await sentinel.publish(), options.catchUpTimeoutMs);
  const read = performance.now();
  // Groups were added since the last listing: the first page after that sorts the names again.
  const afterAdds = await health.client.listGroups(PAGE_SIZE, '');
  const again = await health.client.listGroups(PAGE_SIZE, '');
  // The last group deleted: once health forgot it, it forgot every group of the round.
  const probe = deleted.at(-1);
  let forgottenAfterMs: number | null = null;
  if (probe !== undefined) {
    while (performance.now() - deletedAt < options.forgetTimeoutMs) {
      try {
        await health.client.getGroup(shape.source, shape.target, groupName(probe));
      } catch (error: unknown) {
        if (!isNotFound(error)) throw error;
        forgottenAfterMs = Math.round(performance.now() - deletedAt);
        break;
      }
      await sleep(250);
    }
  }
  // Memory is read a little after the forgetting: V8 frees what health let go of in its own time.
  await sleep(options.settleMs);
  return {
    round: options.round,
    deleted_groups: deleted.length,
    added_groups: added.length,
    groups_ever: population.everUsed,
    deleted_sample: probe === undefined ? null : groupName(probe),
    published_and_read_ms: Math.round(read - started),
    list_groups_first_page_ms: { after_adds: round1(afterAdds.ms), again: round1(again.ms) },
    forgotten_after_ms: forgottenAfterMs,
    rss_mb: round1(health.rssMb()),
    heap_after_last_full_gc_mb: summarizeGc(await health.gcEvents()).heap_after_last_full_mb,
    cpu_seconds: Math.round((health.cpuSeconds() - cpuAtStart) * 100) / 100,
    load_avg: loadAvg(),
  };
}

/** Latency summaries reduced to what the result line shows. */
export function brief(summary: LatencySummary | undefined): { p50: number; p99: number; max: number } | null {
  return summary === undefined ? null : { p50: summary.p50_ms, p99: summary.p99_ms, max: summary.max_ms };
}
