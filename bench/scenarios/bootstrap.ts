// `bootstrap`: many consumer groups have committed on the source before the systems start; how long until
// every group partition stands on the target at the committed position. offsetsync and MirrorMaker 2 (tuned
// to 1 s by default, its defaults on request) on the same brokers, the same topic and the same commits, in
// one run: every system's groups commit before any system starts, then the systems are measured one after
// another, each from its own start with the machine to itself (or, with --together, all from one start).
// The target is polled the same way for every system: each open group's committed offsets, mapped by
// record identity to the source position they stand for (see bootstrap-ledger.ts for what counts as
// applied). With --added-target, a second target joins offsetsync's running system after its phase (see
// bench/support/added-target-phase.ts).
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { KafkaAdapter } from '@offsetsync/kafka';
import {
  BootstrapLedger,
  forEachLimited,
  interleave,
  type ApplyRule,
  type LedgerSummary,
} from '../support/bootstrap-ledger.js';
import { copyToAddedTarget, measureAddedTarget } from '../support/added-target-phase.js';
import { seededRandom } from '../support/commit-workload.js';
import { Cleanup, stopOnSignals } from '@offsetsync/harness';
import {
  observeGroup,
  readTargetPartition,
  startComparisonBed,
  MM2_TUNED,
  SYSTEMS,
  type SystemName,
} from '../support/comparison-bed.js';
import { summarize } from '../support/e2e-latency.js';
import { recordId } from '../support/mm2-compare.js';
import { cpuSeconds, RssSampler } from '../support/process-stats.js';

const HELP = `Usage: npm run -s bench -- --scenario bootstrap [options]

  --groups <n>              groups per system (default 10000); each commits every partition
  --partitions <n>          partitions of the topic (default 10)
  --records <n>             records per partition (default 300); committed positions are drawn in 1 .. n-1
  --systems <list>          systems compared (default offsetsync,mm2_tuned; also mm2_default)
  --together                start the systems at the same moment (default: one after another, on the same
                            brokers with the same committed groups, each with the machine to itself)
  --deadline <s>            longest wait after a system's start for every group partition (default 300)
  --seed <n>                seed of the committed positions (default 7)
  --commit-concurrency <n>  source commits in flight (default 32), over --connections connections
  --poll-concurrency <n>    target OffsetFetch requests in flight (default 32), over --connections connections
  --connections <n>         connections to each cluster for commits and polls (default 4)
  --expect-shift <n>        adds n to every expected source position (default 0): a check of the benchmark
                            itself; with n != 0 offsetsync's group partitions must be reported not applied
                            (on the added target too, and the run then exits with 1)
  --added-target            after offsetsync's phase, a third cluster (the topic copied from the source after
                            records of its own) joins offsetsync's running system with a translator and a
                            committer of its own: time until every group partition is exact there, the
                            collector's count of commits read before and after (it must not move), CPU
                            seconds per process; under "added_target" in the result line. Exits with 1 when
                            a group partition is not exact there or the collector read commits again.
                            Needs offsetsync in --systems; not with --together
`;

/** The cluster that joins with --added-target. */
const ADDED_TARGET = 'added';
/** Records the added target's copy holds of its own first: not as many as the first target's (17 + p). */
const addedOwnRecords = (p: number): number => 40 + 2 * p;
/** offsetsync's target: every group partition applied within this many ms of the start. */
const TARGET_MS = 60_000;
/** A poll round starts at most this often, so a small run does not poll the broker flat out. */
const MIN_ROUND_MS = 250;
const PROGRESS_EVERY_MS = 5_000;

function say(line: string): void {
  process.stderr.write(`bootstrap: ${line}\n`);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function positiveInteger(name: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a whole number above 0: ${value}`);
  return n;
}

/** offsetsync promises the exact position; MirrorMaker's checkpoints one at or before it. */
const RULE: Record<SystemName, ApplyRule> = {
  offsetsync: 'exact',
  mm2_default: 'at-or-before',
  mm2_tuned: 'at-or-before',
};

/** What measuring one set of systems gave: each system's result and the phase's own figures. */
interface PhaseResult {
  systems: Record<string, unknown>;
  summaries: Map<SystemName, LedgerSummary>;
  phase: Record<string, unknown>;
}

export async function runBootstrap(args: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      help: { type: 'boolean' },
      together: { type: 'boolean', default: false },
      groups: { type: 'string', default: '10000' },
      partitions: { type: 'string', default: '10' },
      records: { type: 'string', default: '300' },
      systems: { type: 'string', default: 'offsetsync,mm2_tuned' },
      deadline: { type: 'string', default: '300' },
      seed: { type: 'string', default: '7' },
      'commit-concurrency': { type: 'string', default: '32' },
      'poll-concurrency': { type: 'string', default: '32' },
      connections: { type: 'string', default: '4' },
      'expect-shift': { type: 'string', default: '0' },
      'added-target': { type: 'boolean', default: false },
    },
  });
  if (values.help === true) {
    process.stdout.write(HELP);
    return 0;
  }
  const problems: string[] = [];
  const option = (name: keyof typeof values): number => {
    try {
      return positiveInteger(name, String(values[name]));
    } catch (error: unknown) {
      problems.push((error as Error).message);
      return 1;
    }
  };
  const groups = option('groups');
  const partitions = option('partitions');
  const records = option('records');
  const deadlineMs = option('deadline') * 1_000;
  const seed = option('seed');
  const commitConcurrency = option('commit-concurrency');
  const pollConcurrency = option('poll-concurrency');
  const connections = option('connections');
  const expectShift = Number(values['expect-shift']);
  if (!Number.isInteger(expectShift)) problems.push(`--expect-shift must be a whole number`);
  if (records < 2) problems.push('--records must be at least 2');
  const systems = values.systems.split(',').map((s) => s.trim());
  const unknown = systems.filter((s) => !(SYSTEMS as readonly string[]).includes(s));
  if (unknown.length > 0 || systems.length === 0 || new Set(systems).size !== systems.length)
    problems.push(`--systems takes distinct names of ${SYSTEMS.join(', ')}: ${values.systems}`);
  const together = values.together === true;
  const addedTarget = values['added-target'] === true;
  // The added target is offsetsync's alone: a MirrorMaker syncing its groups meanwhile would share the CPU.
  if (addedTarget && !systems.includes('offsetsync'))
    problems.push('--added-target needs offsetsync in --systems');
  if (addedTarget && together)
    problems.push('--added-target is measured with offsetsync alone: not with --together');
  if (problems.length > 0) {
    process.stderr.write(`${problems.join('\n')}\n${HELP}`);
    return 2;
  }
  const selected = SYSTEMS.filter((s) => systems.includes(s));

  const cleanup = new Cleanup(say);
  stopOnSignals(cleanup, say);
  const loadAtStart = loadavg()[0] ?? 0;
  const began = Date.now();
  say(`${cpus().length} cores, load average ${loadAtStart.toFixed(2)}`);
  say(
    `${selected.join(', ')}: ${groups} groups x ${partitions} partitions = ${groups * partitions} group partitions each, ${records} records per partition`,
  );
  let result: Record<string, unknown> | undefined;
  let addedTargetFailures: string[] = [];
  try {
    const run = randomBytes(3).toString('hex');
    const topic = `bench-mm2-${run}-boot`;
    const ownRecords = (p: number): number => 17 + p;
    // Timestamps in runs of three equal ones, as consumers see when producers batch.
    const base = Date.now() - 30 * 60_000;
    const bed = await startComparisonBed({
      say,
      cleanup,
      run,
      topics: [topic],
      partitions,
      ownRecords,
      systemsStart: 'deferred',
      ...(addedTarget ? { addedTargets: [ADDED_TARGET] } : {}),
      fill: async (producer) => {
        for (let start = 0; start < records; start += 1_000)
          await producer.send({
            topic,
            messages: Array.from({ length: partitions }, (_, p) =>
              Array.from({ length: Math.min(1_000, records - start) }, (_, j) => ({
                partition: p,
                value: recordId(p, start + j),
                timestamp: String(base + Math.floor((start + j) / 3) * 5),
              })),
            ).flat(),
          });
      },
    });

    if (addedTarget)
      await copyToAddedTarget({
        bed,
        target: ADDED_TARGET,
        topic,
        partitions,
        ownRecords: addedOwnRecords,
        say,
      });

    // The selected systems' target copies must hold every record before any group commits.
    const copies = new Map<string, Array<Array<number | undefined>>>();
    const topics = [...new Set(selected.map((s) => bed.targetTopic(s, topic)))];
    const copyStart = Date.now();
    for (;;) {
      let done = true;
      for (const t of topics) {
        const parts = copies.get(t) ?? Array.from({ length: partitions }, () => []);
        copies.set(t, parts);
        for (let p = 0; p < partitions; p++) {
          const copy = parts[p] as Array<number | undefined>;
          await readTargetPartition(bed.target, t, p, copy);
          if (copy.filter((i) => i !== undefined).length < records) done = false;
        }
      }
      if (done) break;
      if (Date.now() - copyStart > 180_000)
        throw new Error('MirrorMaker did not copy every record within 180 s');
      await sleep(500);
    }
    say(`every record copied to ${topics.join(', ')} in ${Date.now() - copyStart} ms`);

    const adapters = (bootstrapServers: string): KafkaAdapter[] =>
      Array.from(
        { length: connections },
        () =>
          new KafkaAdapter({
            cluster: {
              bootstrapServers: [bootstrapServers],
              connectionTimeoutMs: 3_000,
              requestTimeoutMs: 10_000,
            },
            clientId: 'bench-bootstrap',
            logger: pino({ level: 'silent' }),
          }),
      );
    const sourceAdapters = adapters(bed.testbed.info.source.bootstrapServers);
    const targetAdapters = adapters(bed.testbed.info.target.bootstrapServers);
    cleanup.push('disconnecting the commit and poll connections', () =>
      Promise.all([...sourceAdapters, ...targetAdapters].map((a) => a.disconnect())),
    );

    // The same committed positions for every system: group g, partition p commits positions[g][p].
    const random = seededRandom(seed);
    const positions = Array.from({ length: groups }, () =>
      Array.from({ length: partitions }, () => 1 + Math.floor(random() * (records - 1))),
    );
    const groupName = (system: SystemName, g: number): string => `${bed.groupPrefix[system]}g${g}`;
    const commitsToSend = interleave(
      selected.map((system) => Array.from({ length: groups }, (_, g) => ({ system, g }))),
    );
    const commitStart = Date.now();
    let sent = 0;
    let lastCommitReport = commitStart;
    await forEachLimited(commitsToSend, commitConcurrency, async ({ system, g }, i) => {
      const adapter = sourceAdapters[i % sourceAdapters.length] as KafkaAdapter;
      const answers = await adapter.commitOffsets(
        groupName(system, g),
        (positions[g] as number[]).map((offset, partition) => ({ topic, partition, offset, metadata: null })),
      );
      for (const answer of answers) if (answer.error) throw answer.error;
      sent += 1;
      if (Date.now() - lastCommitReport >= PROGRESS_EVERY_MS) {
        lastCommitReport = Date.now();
        say(`committing on the source: ${sent} of ${commitsToSend.length} groups`);
      }
    });
    const commitMs = Date.now() - commitStart;
    say(
      `${commitsToSend.length} groups (${commitsToSend.length * partitions} group partitions) committed on the source in ${commitMs} ms`,
    );

    /**
     * Starts `phase`'s systems together and polls their groups on the target until every group partition
     * is applied or the deadline passed; then reads every group once more. The clock starts for the
     * phase's systems at once: offsetsync's services and the MirrorMakers' group sync.
     */
    const measurePhase = async (phase: readonly SystemName[]): Promise<PhaseResult> => {
      const phaseLoad = loadavg()[0] ?? 0;
      const startMs = Date.now();
      const ledgers = new Map<SystemName, BootstrapLedger>(
        phase.map((system) => [
          system,
          new BootstrapLedger(
            RULE[system],
            Array.from({ length: groups }, (_, g) => groupName(system, g)),
            partitions,
            (g, p) => (positions[g]![p] as number) + expectShift,
            startMs,
          ),
        ]),
      );
      say(`starting ${phase.join(', ')}; the clock runs from now (load average ${phaseLoad.toFixed(2)})`);
      const starting = bed.startSystems(phase);
      // Polling starts at once: a system that is up before the others is measured from the same start.
      let startedMs: Partial<Record<SystemName, number>> = {};
      let startError: Error | undefined;
      let systemsUp = false;
      const samplers = new Map<string, { pid: number; rss: RssSampler }>();
      void starting.then(
        (s) => {
          startedMs = s.startedMs;
          systemsUp = true;
          if (phase.includes('offsetsync'))
            for (const service of bed.services)
              samplers.set(service.role, { pid: service.pid, rss: new RssSampler(service.pid) });
          for (const system of ['mm2_default', 'mm2_tuned'] as const)
            if (phase.includes(system)) {
              const pid = bed.mirrorMakers[system].pid;
              samplers.set(system, { pid, rss: new RssSampler(pid) });
            }
          for (const { rss } of samplers.values()) rss.start(250);
        },
        (error: unknown) => {
          startError = error instanceof Error ? error : new Error(String(error));
        },
      );
      const stopSamplers = (): void => [...samplers.values()].forEach(({ rss }) => rss.stop());
      cleanup.push('stopping the memory samplers', () => Promise.resolve(stopSamplers()));

      /** Polls one group and records what its target commits stand for. */
      let pollErrors = 0;
      let polls = 0;
      const pollGroup = async (system: SystemName, g: number, adapter: KafkaAdapter): Promise<void> => {
        const ledger = ledgers.get(system) as BootstrapLedger;
        const targetTopic = bed.targetTopic(system, topic);
        const copy = copies.get(targetTopic) as Array<Array<number | undefined>>;
        if (await observeGroup(ledger, g, adapter, targetTopic, copy, records)) polls += 1;
        else pollErrors += 1;
      };
      const applied = (): string =>
        phase.map((s) => `${s} ${(ledgers.get(s) as BootstrapLedger).applied}`).join(', ');

      const roundMs: number[] = [];
      const progress = new Map<SystemName, Array<[number, number]>>(phase.map((s) => [s, []]));
      const completedCpu = new Map<SystemName, number>();
      const offsetsyncCpu = (): number | undefined =>
        bed.services.length === 3
          ? bed.services.reduce((sum, service) => sum + (cpuSeconds(service.pid) ?? 0), 0)
          : undefined;
      // MirrorMaker's restart may append records it copies a second time (when its last progress was not
      // stored): the copies are read on, so that target offsets past the first read still map.
      const refreshCopies = async (): Promise<void> => {
        for (const [t, parts] of copies)
          for (let p = 0; p < partitions; p++) await readTargetPartition(bed.target, t, p, parts[p]!);
      };
      let lastProgress = startMs;
      for (;;) {
        if (startError !== undefined) throw startError;
        const open = phase.map((system) =>
          (ledgers.get(system) as BootstrapLedger).openGroupIndexes().map((g) => ({ system, g })),
        );
        if (open.every((o) => o.length === 0) || Date.now() - startMs >= deadlineMs) break;
        if (cleanup.stopping) throw new Error('stopped while polling');
        const roundStart = Date.now();
        await forEachLimited(interleave(open), pollConcurrency, ({ system, g }, i) =>
          pollGroup(system, g, targetAdapters[i % targetAdapters.length] as KafkaAdapter),
        );
        const now = Date.now();
        roundMs.push(now - roundStart);
        for (const system of phase)
          if (!completedCpu.has(system) && (ledgers.get(system) as BootstrapLedger).complete) {
            const cpu = system === 'offsetsync' ? offsetsyncCpu() : cpuSeconds(bed.mirrorMakers[system].pid);
            completedCpu.set(system, cpu ?? Number.NaN);
            say(`${system}: every group partition applied after ${now - startMs} ms`);
          }
        if (now - lastProgress >= PROGRESS_EVERY_MS) {
          lastProgress = now;
          await refreshCopies();
          const s = Math.round((now - startMs) / 100) / 10;
          for (const system of phase)
            progress.get(system)!.push([s, (ledgers.get(system) as BootstrapLedger).applied]);
          say(
            `${s} s: applied ${applied()}; last poll round ${roundMs.at(-1)} ms` +
              (systemsUp ? '' : ' (systems still starting)'),
          );
        }
        await sleep(Math.max(0, MIN_ROUND_MS - (Date.now() - roundStart)));
      }
      const measuredMs = Date.now() - startMs;
      for (const system of phase)
        progress
          .get(system)!
          .push([Math.round(measuredMs / 100) / 10, (ledgers.get(system) as BootstrapLedger).applied]);
      await starting;
      const cpuAtEnd = new Map<string, number | undefined>(
        [...samplers].map(([name, { pid }]) => [name, cpuSeconds(pid)]),
      );
      stopSamplers();
      say(`stopped polling after ${measuredMs} ms: applied ${applied()}`);

      await refreshCopies();
      // One last round over every group of the phase: where each group partition stands now (exact,
      // behind, ahead or missing), whether or not it was applied in time.
      await forEachLimited(
        interleave(phase.map((system) => Array.from({ length: groups }, (_, g) => ({ system, g })))),
        pollConcurrency,
        ({ system, g }, i) => pollGroup(system, g, targetAdapters[i % targetAdapters.length] as KafkaAdapter),
      );

      const round = summarize(roundMs);
      const mb = (bytes: number | undefined): number | null =>
        bytes === undefined || bytes === 0 ? null : Math.round(bytes / 1_048_576);
      const cpu = (v: number | undefined): number | null =>
        v === undefined || Number.isNaN(v) ? null : Math.round(v * 100) / 100;
      const summaries = new Map(phase.map((system) => [system, ledgers.get(system)!.summary()]));
      const systemsResult = Object.fromEntries(
        phase.map((system) => {
          const summary = summaries.get(system)!;
          const resources =
            system === 'offsetsync'
              ? {
                  cpu_seconds: Object.fromEntries(
                    ['collector', 'translator', 'committer'].map((r) => [r, cpu(cpuAtEnd.get(r))]),
                  ),
                  rss_peak_mb: Object.fromEntries(
                    ['collector', 'translator', 'committer'].map((r) => [
                      r,
                      mb(samplers.get(r)?.rss.peakBytes),
                    ]),
                  ),
                }
              : {
                  cpu_seconds: cpu(cpuAtEnd.get(system)),
                  rss_peak_mb: mb(samplers.get(system)?.rss.peakBytes),
                };
          return [
            system,
            {
              ...summary,
              rule: RULE[system],
              started_ms: startedMs[system] ?? null,
              cpu_seconds_until_all_applied: cpu(completedCpu.get(system)),
              ...resources,
              progress: progress.get(system),
            },
          ];
        }),
      );
      for (const [system, s] of Object.entries(systemsResult))
        say(`${system.padEnd(12)} ${JSON.stringify(s)}`);
      return {
        systems: systemsResult,
        summaries,
        phase: {
          systems: phase,
          load_avg_at_start: Math.round(phaseLoad * 100) / 100,
          measured_ms: measuredMs,
          poll_rounds: roundMs.length,
          poll_round_ms: { p50: round?.p50_ms ?? null, max: round?.max_ms ?? null },
          polls,
          poll_errors: pollErrors,
        },
      };
    };

    // One at a time (the default), each system has the machine to itself while it is measured: on two
    // cores, MirrorMaker's JVM and offsetsync's services would otherwise take CPU from each other.
    const phases = together ? [selected] : selected.map((system) => [system]);
    const systemsResult: Record<string, unknown> = {};
    const phaseResults: Array<Record<string, unknown>> = [];
    let osync: LedgerSummary | undefined;
    let added: Record<string, unknown> | undefined;
    for (const [i, phase] of phases.entries()) {
      const measured = await measurePhase(phase);
      Object.assign(systemsResult, measured.systems);
      phaseResults.push(measured.phase);
      osync ??= measured.summaries.get('offsetsync');
      if (addedTarget && osync !== undefined && phase.includes('offsetsync')) {
        // Measured whether or not the first target got every group partition: the result says which.
        const measuredAdded = await measureAddedTarget({
          bed,
          cleanup,
          say,
          target: ADDED_TARGET,
          topic,
          groups: Array.from({ length: groups }, (_, g) => groupName('offsetsync', g)),
          partitions,
          records,
          expected: (g, p) => (positions[g]![p] as number) + expectShift,
          firstTargetComplete: osync.not_applied === 0,
          deadlineMs,
          pollConcurrency,
          connections,
        });
        added = measuredAdded.result;
        addedTargetFailures = measuredAdded.failures;
        say(`added target ${JSON.stringify(added)}`);
      }
      if (phase.includes('offsetsync') && i < phases.length - 1) {
        await bed.stopOffsetsync();
        say('offsetsync stopped; the next system has the machine');
      }
    }
    cleanup.failed = false;
    result = {
      bench: 'bootstrap',
      systems: systemsResult,
      order: together ? 'together' : 'one-at-a-time',
      phases: phaseResults,
      group_partitions_per_system: groups * partitions,
      groups_per_system: groups,
      partitions,
      records_per_partition: records,
      target_ms: TARGET_MS,
      target_met:
        osync === undefined ? null : osync.all_applied_ms !== null && osync.all_applied_ms <= TARGET_MS,
      deadline_s: deadlineMs / 1_000,
      source_commit_ms: commitMs,
      expect_shift: expectShift,
      seed,
      ...(selected.includes('mm2_default')
        ? {
            mm2_default:
              'MirrorMaker 2 defaults: emit.checkpoints.interval.seconds 60, sync.group.offsets.interval.seconds 60, offset.lag.max 100',
          }
        : {}),
      ...(selected.includes('mm2_tuned') ? { mm2_tuned: MM2_TUNED } : {}),
      ...(added === undefined ? {} : { added_target: added }),
      seconds: Math.round((Date.now() - began) / 1_000),
      cores: cpus().length,
      load_avg_at_start: Math.round(loadAtStart * 100) / 100,
      node: process.version,
    };
  } catch (error: unknown) {
    // Interrupted (Ctrl-C): the signal handler says so and cleans up; no stack trace for that.
    if (!cleanup.stopping)
      say(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  } finally {
    await cleanup.run();
  }
  if (result === undefined) return 1;
  process.stdout.write(`${JSON.stringify(result)}\n`);
  if (addedTargetFailures.length > 0) {
    say(`added target failed: ${addedTargetFailures.join('; ')}`);
    return 1;
  }
  return 0;
}
