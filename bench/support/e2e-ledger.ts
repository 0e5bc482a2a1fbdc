// What came back in the end-to-end (steady) benchmark: the commits it made on the source and, for each,
// the OffsetApplied event the committer published (applied or skipped), per phase of the run.
import { ApplyOutcome, SkipReason, type OffsetApplied } from '@offsetsync/contracts';
import { commitKey, LatencySamples, type StageTracker } from './e2e-latency.js';

export type Phase = 'probe' | 'warmup' | 'measure';

/**
 * The commits made and what the committer reported about each: every commit is expected once, by key,
 * until its OffsetApplied event arrives (applied or skipped).
 */
export class Ledger {
  private readonly expected = new Map<string, Phase>();
  /**
   * Open commits per group partition: source offset -> when it was sent (epoch ms). The streams keep the
   * last event per key, so a commit still waiting in a stream when the next one of its group partition
   * arrives is replaced by it, and only the newer one comes back: an event for a newer offset resolves
   * the older open ones as superseded.
   */
  private readonly openOf = new Map<string, Map<number, number>>();
  readonly superseded: Record<Phase, number> = { probe: 0, warmup: 0, measure: 0 };
  readonly open: Record<Phase, number> = { probe: 0, warmup: 0, measure: 0 };
  /** Source commits the broker accepted. */
  readonly committed: Record<Phase, number> = { probe: 0, warmup: 0, measure: 0 };
  readonly resolved: Record<Phase, number> = { probe: 0, warmup: 0, measure: 0 };
  readonly latency: Record<Phase, LatencySamples> = {
    probe: new LatencySamples(),
    warmup: new LatencySamples(),
    measure: new LatencySamples(),
  };
  readonly skipped: Record<Phase, Record<string, number>> = { probe: {}, warmup: {}, measure: {} };
  /** When the last event of each phase arrived (epoch ms). */
  readonly lastResolvedAtMs: Record<Phase, number> = { probe: 0, warmup: 0, measure: 0 };
  /** Round trip of the source OffsetCommit requests. */
  readonly commitRoundTrip: Record<Phase, LatencySamples> = {
    probe: new LatencySamples(),
    warmup: new LatencySamples(),
    measure: new LatencySamples(),
  };
  commitErrors = 0;
  lastCommitError: string | undefined;
  /** OffsetApplied events for no open commit: repeats after a redelivery, or another run's groups. */
  unmatchedEvents = 0;

  constructor(private readonly stages: StageTracker | undefined) {}

  expect(key: string, phase: Phase, group: string, partition: number, sourceOffset: number): void {
    this.expected.set(key, phase);
    const partitionKey = `${group}\u0000${partition}`;
    let open = this.openOf.get(partitionKey);
    if (open === undefined) this.openOf.set(partitionKey, (open = new Map<number, number>()));
    open.set(sourceOffset, Date.now());
    this.open[phase] += 1;
    if (phase === 'measure') this.stages?.track(key);
  }

  /** A commit the broker refused: nothing will come back for it. */
  forget(key: string): void {
    const phase = this.expected.get(key);
    if (phase === undefined) return;
    this.expected.delete(key);
    this.open[phase] -= 1;
  }

  onApplied(event: OffsetApplied, storedAtMs: number): void {
    this.stages?.applied(event, storedAtMs);
    const key = commitKey(event.group, event.partition, event.sourceOffset);
    const phase = this.expected.get(key);
    if (phase === undefined) {
      this.unmatchedEvents += 1;
      return;
    }
    const open = this.openOf.get(`${event.group}\u0000${event.partition}`);
    open?.delete(event.sourceOffset);
    for (const [offset, sentAtMs] of open ?? []) {
      if (offset >= event.sourceOffset) continue;
      open?.delete(offset);
      const olderKey = commitKey(event.group, event.partition, offset);
      const olderPhase = this.expected.get(olderKey);
      if (olderPhase === undefined) continue;
      this.expected.delete(olderKey);
      this.open[olderPhase] -= 1;
      this.resolved[olderPhase] += 1;
      this.superseded[olderPhase] += 1;
      // Its position reached the target with the newer commit: measured from when it was sent, which is a
      // little before the broker stamped it.
      if (event.outcome === ApplyOutcome.APPLY_OUTCOME_APPLIED)
        this.latency[olderPhase].add(event.appliedAtMs - sentAtMs);
    }
    this.expected.delete(key);
    this.open[phase] -= 1;
    this.resolved[phase] += 1;
    this.lastResolvedAtMs[phase] = Date.now();
    if (event.outcome === ApplyOutcome.APPLY_OUTCOME_APPLIED) {
      this.latency[phase].add(event.appliedAtMs - event.sourceCommitTimestampMs);
    } else {
      const reason = SkipReason[event.skipReason].replace(/^SKIP_REASON_/, '').toLowerCase();
      this.skipped[phase][reason] = (this.skipped[phase][reason] ?? 0) + 1;
    }
  }
}
