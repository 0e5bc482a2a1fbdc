// `failover`: records replayed and skipped when a consumer group moves from the source to the target,
// offsetsync vs MirrorMaker 2 (at its defaults and tuned), over several commit positions, on a topic whose
// records share timestamps in runs of five (with one in forty stamped before its predecessor) and on one
// with a distinct timestamp per record. See docs/benchmarks.md.
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
import { countMove, recordId } from '../support/mm2-compare.js';
import { summarize } from '../support/e2e-latency.js';
import { randomBytes } from 'node:crypto';

const MODES = ['collisions', 'unique'] as const;
type Mode = (typeof MODES)[number];

const HELP = `Usage: npm run -s bench -- --scenario failover [options]

  --positions <list>     fractions of each partition the groups commit at (default 0.1,0.37,0.5,0.83);
                         each becomes round(f x records) + 2 + partition, inside a run of equal timestamps
  --records <n>          records per source partition (default 3000)
  --partitions <n>       partitions of each topic (default 3)
  --settle <s>           longest wait for a system's target commits after the source commit (default 150:
                         MirrorMaker's default sync interval is 60 s)
`;

function say(line: string): void {
  process.stderr.write(`failover: ${line}\n`);
}

/** Timestamps of record `i`: runs of 5 equal ones, every 40th before its predecessor; or one per record. */
function timestampOf(mode: Mode, base: number, i: number): number {
  return mode === 'collisions' ? base + Math.floor(i / 5) * 3 - (i % 40 === 39 ? 4 : 0) : base + i * 3;
}

interface GroupPlan {
  system: SystemName;
  mode: Mode;
  fraction: number;
  group: string;
  /** Source position (next offset to consume) by partition. */
  positions: number[];
  committedAtMs: number;
  /** Target committed offsets by partition, the time they last changed, and when the first appeared. */
  target: Map<number, number>;
  changedAtMs: number;
  firstSeenMs: number | undefined;
  settled: boolean;
}

export async function runFailover(args: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      help: { type: 'boolean' },
      positions: { type: 'string', default: '0.1,0.37,0.5,0.83' },
      records: { type: 'string', default: '3000' },
      partitions: { type: 'string', default: '3' },
      settle: { type: 'string', default: '150' },
    },
  });
  if (values.help === true) {
    process.stdout.write(HELP);
    return 0;
  }
  const fractions = values.positions.split(',').map(Number);
  const records = Number(values.records);
  const partitions = Number(values.partitions);
  const settleMs = Number(values.settle) * 1_000;
  if (fractions.some((f) => !(f > 0 && f < 1)) || !(records >= 100) || !(partitions >= 1) || !(settleMs > 0))
    throw new Error(`invalid options: ${args.join(' ')}\n${HELP}`);

  const cleanup = new Cleanup(say);
  stopOnSignals(cleanup, say);
  const loadAtStart = loadavg()[0] ?? 0;
  const began = Date.now();
  say(`${cpus().length} cores, load average ${loadAtStart.toFixed(2)}`);
  let result: Record<string, unknown> | undefined;
  try {
    const run = randomBytes(3).toString('hex');
    const topicOf = (mode: Mode): string => `bench-mm2-${run}-${mode}`;
    const ownRecords = (p: number): number => 17 + p;
    const base = Date.now() - 30 * 60_000;
    const bed = await startComparisonBed({
      say,
      cleanup,
      run,
      topics: MODES.map(topicOf),
      partitions,
      ownRecords,
      fill: async (producer) => {
        for (const mode of MODES)
          for (let start = 0; start < records; start += 1_000)
            await producer.sendBatch({
              topicMessages: [
                {
                  topic: topicOf(mode),
                  messages: Array.from({ length: partitions }, (_, p) =>
                    Array.from({ length: Math.min(1_000, records - start) }, (_, j) => ({
                      partition: p,
                      key: `k${(start + j) % 11}`,
                      value: recordId(p, start + j),
                      timestamp: String(timestampOf(mode, base, start + j)),
                    })),
                  ).flat(),
                },
              ],
            });
      },
    });

    // Both MirrorMakers copy every record before any group commits.
    const copyStart = Date.now();
    const copies = new Map<string, Array<Array<number | undefined>>>();
    for (;;) {
      let done = true;
      for (const mode of MODES)
        for (const system of ['offsetsync', 'mm2_tuned'] as const) {
          const topic = bed.targetTopic(system, topicOf(mode));
          const parts = copies.get(topic) ?? Array.from({ length: partitions }, () => []);
          copies.set(topic, parts);
          for (let p = 0; p < partitions; p++) {
            const copy = parts[p] as Array<number | undefined>;
            await readTargetPartition(bed.target, topic, p, copy);
            if (copy.length < ownRecords(p) + records) done = false;
          }
        }
      if (done) break;
      if (Date.now() - copyStart > 180_000)
        throw new Error('MirrorMaker did not copy every record within 180 s');
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    say(`every record copied to both target copies in ${Date.now() - copyStart} ms`);

    // Every system's groups commit the same source positions.
    const plans: GroupPlan[] = [];
    for (const mode of MODES)
      for (const fraction of fractions)
        for (const system of SYSTEMS)
          plans.push({
            system,
            mode,
            fraction,
            group: `${bed.groupPrefix[system]}${mode}-${Math.round(fraction * 100)}`,
            positions: Array.from({ length: partitions }, (_, p) =>
              Math.min(records - 1, Math.round(fraction * records) + 2 + p),
            ),
            committedAtMs: 0,
            target: new Map(),
            changedAtMs: 0,
            firstSeenMs: undefined,
            settled: false,
          });
    for (const plan of plans) {
      const answers = await bed.source.commitOffsets(
        plan.group,
        plan.positions.map((offset, partition) => ({
          topic: topicOf(plan.mode),
          partition,
          offset,
          metadata: null,
        })),
      );
      for (const answer of answers) if (answer.error) throw answer.error;
      plan.committedAtMs = Date.now();
      plan.changedAtMs = plan.committedAtMs;
    }
    say(
      `${plans.length} groups committed on the source (${fractions.length} positions x ${MODES.length} topics x ${SYSTEMS.length} systems)`,
    );

    // Wait until each group's target commit has not changed for 10 s, or its system's deadline.
    const quietMs = 10_000;
    let lastReport = 0;
    for (;;) {
      const now = Date.now();
      for (const plan of plans.filter((p) => !p.settled)) {
        const committed = await committedOn(
          bed.target,
          plan.group,
          bed.targetTopic(plan.system, topicOf(plan.mode)),
        );
        const changed =
          committed.size !== plan.target.size || [...committed].some(([p, o]) => plan.target.get(p) !== o);
        if (changed) {
          plan.target = committed;
          plan.changedAtMs = now;
          plan.firstSeenMs ??= now - plan.committedAtMs;
        }
        const complete = plan.target.size === partitions;
        if ((complete && now - plan.changedAtMs >= quietMs) || now - plan.committedAtMs >= settleMs)
          plan.settled = true;
      }
      const open = plans.filter((p) => !p.settled);
      if (now - lastReport >= 10_000) {
        lastReport = now;
        const by = (s: SystemName): string =>
          `${s} ${plans.filter((p) => p.system === s && p.target.size === partitions).length}/${plans.filter((p) => p.system === s).length}`;
        say(
          `${Math.round((now - plans[0]!.committedAtMs) / 1000)} s: groups with a target commit: ${SYSTEMS.map(by).join(', ')}`,
        );
      }
      if (open.length === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }

    // Judge every group by record identity on its target copy.
    for (const [topic, parts] of copies)
      for (let p = 0; p < partitions; p++) await readTargetPartition(bed.target, topic, p, parts[p]!);
    const rows = plans.map((plan) => {
      const copy = copies.get(bed.targetTopic(plan.system, topicOf(plan.mode)))!;
      let replayed = 0;
      let skipped = 0;
      let noCommit = 0;
      for (let p = 0; p < partitions; p++) {
        const committed = plan.target.get(p);
        if (committed === undefined) {
          noCommit += 1;
          continue;
        }
        const counts = countMove({
          targetRecords: copy[p]!,
          committed,
          sourcePosition: plan.positions[p]!,
          sourceRecords: records,
        });
        replayed += counts.replayed;
        skipped += counts.skipped;
      }
      return {
        system: plan.system,
        mode: plan.mode,
        fraction: plan.fraction,
        positions: plan.positions,
        replayed,
        skipped,
        no_commit_partitions: noCommit,
        first_target_commit_ms: plan.firstSeenMs ?? null,
      };
    });
    for (const row of rows)
      say(
        `${row.system.padEnd(12)} ${row.mode.padEnd(10)} at ${row.fraction}: replayed=${row.replayed} skipped=${row.skipped} no_commit=${row.no_commit_partitions}/${partitions} first target commit ${row.first_target_commit_ms ?? '-'} ms`,
      );
    const totals = Object.fromEntries(
      SYSTEMS.map((system) => [
        system,
        Object.fromEntries(
          MODES.map((mode) => {
            const mine = rows.filter((r) => r.system === system && r.mode === mode);
            const seen = mine.map((r) => r.first_target_commit_ms).filter((v): v is number => v !== null);
            const s = summarize(seen);
            return [
              mode,
              {
                group_partitions: mine.length * partitions,
                replayed: mine.reduce((a, r) => a + r.replayed, 0),
                skipped: mine.reduce((a, r) => a + r.skipped, 0),
                no_commit_partitions: mine.reduce((a, r) => a + r.no_commit_partitions, 0),
                first_target_commit_ms_max: s?.max_ms ?? null,
              },
            ];
          }),
        ),
      ]),
    );
    cleanup.failed = false;
    result = {
      bench: 'failover',
      totals,
      rows,
      records_per_partition: records,
      partitions,
      fractions,
      settle_timeout_s: settleMs / 1_000,
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
    await cleanup.run();
  }
  if (result === undefined) return 1;
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return 0;
}
