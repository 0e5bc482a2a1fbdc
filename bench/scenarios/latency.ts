// `latency`: how long after a consumer group commits on the source the target shows it, offsetsync vs
// MirrorMaker 2 at its defaults and tuned to 1 s, on the same brokers, the same topic (records written all
// along) and the same commits, in one run. Every system is measured the same way: its groups' committed
// offsets on the target are polled, each mapped by record identity to the source position it stands for,
// and a commit counts as shown once the target stands past the group's previous commit (see matchCommits).
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Cleanup, stopOnSignals } from '@offsetsync/harness';
import {
  committedOn,
  readTargetPartition,
  startComparisonBed,
  MM2_TUNED,
  SYSTEMS,
  type SystemName,
} from '../support/comparison-bed.js';
import { summarize } from '../support/e2e-latency.js';
import {
  matchCommits,
  recordId,
  sourcePositionAt,
  type CommitLatency,
  type SourceCommit,
} from '../support/mm2-compare.js';

const HELP = `Usage: npm run -s bench -- --scenario latency [options]

  --seconds <n>        how long the groups commit (default 90)
  --groups <n>         groups per system (default 4); each commits every partition
  --partitions <n>     partitions of the topic (default 3)
  --interval <s>       seconds between two commits of a group (default 2), staggered over the groups
  --rate <n>           records written per second and partition, all along (default 20)
  --drain <s>          longest wait after the last commit for every system to show it (default 150: at its defaults MirrorMaker
                       emits a checkpoint and syncs it each up to 60 s apart)
  --poll <ms>          how often the target's committed offsets are read (default 100)
`;

function say(line: string): void {
  process.stderr.write(`latency: ${line}\n`);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Track {
  system: SystemName;
  group: string;
  topic: string;
  /** By partition: the first (unmeasured) commit, then the measured ones, and the target polls (raw offsets). */
  baseline: number[];
  commits: SourceCommit[][];
  polls: Array<Array<{ atMs: number; offset: number }>>;
}

export async function runLatency(args: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      help: { type: 'boolean' },
      seconds: { type: 'string', default: '90' },
      groups: { type: 'string', default: '4' },
      partitions: { type: 'string', default: '3' },
      interval: { type: 'string', default: '2' },
      rate: { type: 'string', default: '20' },
      drain: { type: 'string', default: '150' },
      poll: { type: 'string', default: '100' },
    },
  });
  if (values.help === true) {
    process.stdout.write(HELP);
    return 0;
  }
  const seconds = Number(values.seconds);
  const groups = Number(values.groups);
  const partitions = Number(values.partitions);
  const intervalMs = Number(values.interval) * 1_000;
  const rate = Number(values.rate);
  const drainMs = Number(values.drain) * 1_000;
  const pollMs = Number(values.poll);
  if (
    ![seconds, groups, partitions, intervalMs, rate, drainMs, pollMs].every(
      (v) => Number.isFinite(v) && v > 0,
    )
  )
    throw new Error(`invalid options: ${args.join(' ')}\n${HELP}`);

  const cleanup = new Cleanup(say);
  stopOnSignals(cleanup, say);
  const loadAtStart = loadavg()[0] ?? 0;
  const began = Date.now();
  say(`${cpus().length} cores, load average ${loadAtStart.toFixed(2)}`);
  let result: Record<string, unknown> | undefined;
  let stopWriting = false;
  let writer: Promise<void> | undefined;
  try {
    const run = randomBytes(3).toString('hex');
    const topic = `bench-mm2-${run}-live`;
    const ownRecords = (p: number): number => 17 + p;
    const written = Array.from({ length: partitions }, () => 0);
    const bed = await startComparisonBed({
      say,
      cleanup,
      run,
      topics: [topic],
      partitions,
      ownRecords,
      fill: async (producer) => {
        // Records all along, so a caught-up group's position always becomes a record on the target.
        const send = async (perPartition: number): Promise<void> => {
          await producer.send({
            topic,
            messages: Array.from({ length: partitions }, (_, p) =>
              Array.from({ length: perPartition }, () => ({
                partition: p,
                value: recordId(p, written[p]!++),
              })),
            ).flat(),
          });
        };
        await send(200);
        const tickMs = 100;
        let due = 0;
        writer = (async () => {
          while (!stopWriting) {
            due += (rate * tickMs) / 1_000;
            const now = Math.floor(due);
            due -= now;
            if (now > 0) await send(now);
            await sleep(tickMs);
          }
        })();
        cleanup.push('stopping the record writer', async () => {
          stopWriting = true;
          await writer;
        });
      },
    });

    const tracks: Track[] = SYSTEMS.flatMap((system) =>
      Array.from({ length: groups }, (_, g) => ({
        system,
        group: `${bed.groupPrefix[system]}g${g}`,
        topic: bed.targetTopic(system, topic),
        baseline: [],
        commits: Array.from({ length: partitions }, () => []),
        polls: Array.from({ length: partitions }, () => []),
      })),
    );
    const sourceEnds = async (): Promise<number[]> => {
      const bounds = await bed.source.partitionBounds(
        Array.from({ length: partitions }, (_, partition) => ({ topic, partition })),
      );
      return bounds.map((b) => {
        if (b instanceof Error) throw b;
        return b.highWatermark;
      });
    };
    const commit = async (group: string, offsets: number[]): Promise<number> => {
      const atMs = Date.now();
      const answers = await bed.source.commitOffsets(
        group,
        offsets.map((offset, partition) => ({ topic, partition, offset, metadata: null })),
      );
      for (const answer of answers) if (answer.error) throw answer.error;
      return atMs;
    };
    // The same source offsets for the same group number of every system: one commit per system group.
    const commitAll = async (g: number, measured: boolean): Promise<void> => {
      const ends = await sourceEnds();
      for (const track of tracks.filter((t) => t.group.endsWith(`g${g}`))) {
        const atMs = await commit(track.group, ends);
        if (!measured) track.baseline = ends;
        else ends.forEach((offset, p) => track.commits[p]!.push({ atMs, offset }));
      }
    };
    for (let g = 0; g < groups; g++) await commitAll(g, false);
    say(
      `${tracks.length} groups (${groups} per system, ${partitions} partitions each) committed once (not measured)`,
    );
    // Measure from when offsetsync and the tuned MirrorMaker have shown that first commit (services and
    // connectors warmed up), 60 s at most: MirrorMaker commits nothing for a partition until it has an
    // offset sync at or below the position, which may take a later commit. MirrorMaker at its defaults is
    // not waited for: its interval is what is measured.
    const warmStart = Date.now();
    const warming = tracks.filter((t) => t.system !== 'mm2_default');
    const missing = new Set(warming.map((t) => t.group));
    while (missing.size > 0 && Date.now() - warmStart < 60_000) {
      for (const track of warming.filter((t) => missing.has(t.group)))
        if ((await committedOn(bed.target, track.group, track.topic)).size === partitions)
          missing.delete(track.group);
      await sleep(200);
    }
    say(
      `first commits shown on the target after ${Date.now() - warmStart} ms` +
        (missing.size > 0
          ? `; not (yet) on every partition: ${[...missing].join(', ')}`
          : ' by offsetsync and the tuned MirrorMaker'),
    );

    let polling = true;
    let pollErrors = 0;
    const poller = (async () => {
      while (polling) {
        const started = Date.now();
        await Promise.all(
          tracks.map(async (track) => {
            try {
              const committed = await committedOn(bed.target, track.group, track.topic);
              const atMs = Date.now();
              for (const [p, offset] of committed) track.polls[p]?.push({ atMs, offset });
            } catch {
              pollErrors += 1;
            }
          }),
        );
        await sleep(Math.max(0, pollMs - (Date.now() - started)));
      }
    })();
    cleanup.push('stopping the poller', async () => {
      polling = false;
      await poller;
    });

    // Measure: group g commits every interval, the groups staggered over it.
    const measureStart = Date.now();
    let commits = 0;
    let lastReport = measureStart;
    for (let tick = 0; Date.now() - measureStart < seconds * 1_000; tick++) {
      const g = tick % groups;
      const dueAt = measureStart + (tick * intervalMs) / groups;
      await sleep(Math.max(0, dueAt - Date.now()));
      await commitAll(g, true);
      commits += SYSTEMS.length * partitions;
      if (Date.now() - lastReport >= 10_000) {
        lastReport = Date.now();
        say(
          `${Math.round((lastReport - measureStart) / 1000)} s: ${commits} group-partition commits (all systems)`,
        );
      }
    }
    say(
      `measured for ${seconds} s; waiting up to ${drainMs / 1000} s for every system to show the last commits`,
    );

    const copies = new Map<string, Array<Array<number | undefined>>>();
    const refreshCopies = async (): Promise<void> => {
      for (const t of new Set(tracks.map((x) => x.topic))) {
        const parts = copies.get(t) ?? Array.from({ length: partitions }, () => []);
        copies.set(t, parts);
        for (let p = 0; p < partitions; p++) await readTargetPartition(bed.target, t, p, parts[p]!);
      }
    };
    const evaluate = (): Map<SystemName, CommitLatency[]> => {
      const bySystem = new Map<SystemName, CommitLatency[]>(SYSTEMS.map((s) => [s, []]));
      for (const track of tracks) {
        const copy = copies.get(track.topic)!;
        for (let p = 0; p < partitions; p++) {
          const observations = track.polls[p]!.flatMap((poll) => {
            const sourcePosition = sourcePositionAt(copy[p]!, poll.offset, false, 0);
            return sourcePosition === undefined ? [] : [{ atMs: poll.atMs, sourcePosition }];
          });
          bySystem
            .get(track.system)!
            .push(...matchCommits(track.commits[p]!, observations, track.baseline[p] ?? 0));
        }
      }
      return bySystem;
    };
    const drainStart = Date.now();
    for (;;) {
      await sleep(5_000);
      await refreshCopies();
      const open = [...evaluate()].map(
        ([s, l]) => [s, l.filter((x) => x.latencyMs === undefined).length] as const,
      );
      say(
        `drain ${Math.round((Date.now() - drainStart) / 1000)} s: not shown yet ${open.map(([s, n]) => `${s} ${n}`).join(', ')}`,
      );
      if (open.every(([, n]) => n === 0) || Date.now() - drainStart >= drainMs) break;
    }
    polling = false;
    await poller;
    // A little more of every copy, so that positions at the end of the log map to records.
    await sleep(1_000);
    await refreshCopies();
    const measured = evaluate();
    const systems = Object.fromEntries(
      SYSTEMS.map((system) => {
        const all = measured.get(system)!;
        const shown = all.filter((x) => x.latencyMs !== undefined);
        const latency = summarize(shown.map((x) => x.latencyMs!));
        const behind = summarize(shown.map((x) => x.recordsBehind!));
        return [
          system,
          {
            commits: all.length,
            shown: shown.length,
            not_shown: all.length - shown.length,
            p50_ms: latency?.p50_ms ?? null,
            p99_ms: latency?.p99_ms ?? null,
            max_ms: latency?.max_ms ?? null,
            mean_ms: latency?.mean_ms ?? null,
            exact: shown.filter((x) => x.recordsBehind === 0).length,
            records_behind_p50: behind?.p50_ms ?? null,
            records_behind_max: behind?.max_ms ?? null,
          },
        ];
      }),
    );
    for (const [system, s] of Object.entries(systems)) say(`${system.padEnd(12)} ${JSON.stringify(s)}`);
    cleanup.failed = false;
    result = {
      bench: 'latency',
      systems,
      seconds_measured: seconds,
      groups_per_system: groups,
      partitions,
      commit_interval_s: intervalMs / 1000,
      records_per_s_per_partition: rate,
      poll_ms: pollMs,
      poll_errors: pollErrors,
      mm2_default:
        'MirrorMaker 2 defaults: emit.checkpoints.interval.seconds 60, sync.group.offsets.interval.seconds 60, offset.lag.max 100',
      mm2_tuned: MM2_TUNED,
      seconds: Math.round((Date.now() - began) / 1_000),
      cores: cpus().length,
      load_avg_at_start: Math.round(loadAtStart * 100) / 100,
      node: process.version,
    };
  } catch (error: unknown) {
    say(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  } finally {
    stopWriting = true;
    await cleanup.run();
  }
  if (result === undefined) return 1;
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return 0;
}
