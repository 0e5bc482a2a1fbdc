// The verdict of the bootstrap scenario's added-target phase (bench/support/added-target-phase.ts): a
// target that joins a running system must get every existing group partition exactly, from the streams'
// current state, while the collector reads nothing of the source's offsets topic again for it. Pure: the
// phase reads the target and the collector's heartbeats and passes in what it saw.
import type { LedgerSummary } from './bootstrap-ledger.js';

/** The collector's heartbeat, as far as the check reads it. */
export interface CollectorReading {
  /** When the collector started, epoch ms: its counts are since then. */
  startedAtMs: number;
  /** When it sent this heartbeat, epoch ms. */
  sentAtMs: number;
  /** Its counts of offsets-topic records by outcome (`committed`, `deleted`, `filtered`, ...). */
  eventsByOutcome: Readonly<Record<string, number>>;
}

/**
 * The commit records of included groups the collector passed on since it started: commits and
 * deletions. Group metadata and the commits of groups it leaves out (its own among them) are not
 * counted: they keep coming while consumer groups run, whatever a new target does.
 */
export function commitsRead(reading: CollectorReading): number {
  return (reading.eventsByOutcome.committed ?? 0) + (reading.eventsByOutcome.deleted ?? 0);
}

/**
 * What failed, empty when the phase passed: every group partition must stand exactly on the added target
 * at the last look, and the collector, the same process throughout, must have passed on no commit record
 * between `before` (the new link's services not started yet) and `after` (every group partition looked
 * at, a few heartbeats later). Nothing commits on the source meanwhile, so any commit it passed on was
 * read again.
 */
export function addedTargetFailures(
  summary: Pick<LedgerSummary, 'group_partitions' | 'exact' | 'not_applied' | 'not_applied_sample'>,
  before: CollectorReading,
  after: CollectorReading,
): string[] {
  const failures: string[] = [];
  if (summary.exact !== summary.group_partitions || summary.not_applied > 0)
    failures.push(
      `${summary.exact} of ${summary.group_partitions} group partitions exact on the added target` +
        (summary.not_applied_sample.length > 0 ? ` (for example ${summary.not_applied_sample[0]})` : ''),
    );
  if (after.startedAtMs !== before.startedAtMs)
    failures.push(
      'the collector restarted during the phase: its counts began again from 0, so they cannot show what it read',
    );
  else if (commitsRead(after) !== commitsRead(before))
    failures.push(
      `the collector passed on ${commitsRead(after) - commitsRead(before)} commit records during the phase (${commitsRead(before)} before, ${commitsRead(after)} after): it read the offsets topic again`,
    );
  return failures;
}

/**
 * CPU seconds each process of `atEnd` used between two readings (`cpuSeconds` of process-stats.ts),
 * rounded to 0.01. A process missing from `atStart` started during the phase and counts from 0; one read
 * as gone (undefined) at either end has no figure (null).
 */
export function cpuDuring(
  atStart: ReadonlyMap<string, number | undefined>,
  atEnd: ReadonlyMap<string, number | undefined>,
): Record<string, number | null> {
  return Object.fromEntries(
    [...atEnd].map(([name, end]) => {
      const start = atStart.has(name) ? atStart.get(name) : 0;
      if (end === undefined || start === undefined) return [name, null];
      return [name, Math.round((end - start) * 100) / 100];
    }),
  );
}
