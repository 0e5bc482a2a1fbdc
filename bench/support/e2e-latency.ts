// Latency bookkeeping for the end-to-end benchmark: percentiles of a set of samples, and the time each
// measured commit spent in each stage of the pipeline (collector -> translator -> committer), pieced
// together from the three events the services publish about it. Pure: no servers, no clock.
import type { OffsetApplied, OffsetCommitted, OffsetTranslated } from '@offsetsync/contracts';

/** Summary of a set of latency samples, in milliseconds (nearest-rank percentiles). */
export interface LatencySummary {
  count: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  max_ms: number;
  mean_ms: number;
}

/** The value at quantile `q` (0 to 1] of ascending `sorted` by the nearest-rank method; NaN when empty. */
function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1] as number;
}

/** Collects samples and summarises them. */
export class LatencySamples {
  private values: number[] = [];
  /** Index of the first sample of the current window. */
  private windowStart = 0;

  add(ms: number): void {
    this.values.push(ms);
  }

  get count(): number {
    return this.values.length;
  }

  /** Summary of every sample so far; undefined when there is none. */
  summary(): LatencySummary | undefined {
    return summarize(this.values);
  }

  /** Summary of the samples added since the last call of `takeWindow`; undefined when none. */
  takeWindow(): LatencySummary | undefined {
    const window = this.values.slice(this.windowStart);
    this.windowStart = this.values.length;
    return summarize(window);
  }
}

export function summarize(values: readonly number[]): LatencySummary | undefined {
  if (values.length === 0) return undefined;
  const sorted = Float64Array.from(values).sort();
  let total = 0;
  for (const v of sorted) total += v;
  const round = (v: number): number => Math.round(v * 10) / 10;
  return {
    count: sorted.length,
    p50_ms: round(percentile(sorted, 0.5)),
    p90_ms: round(percentile(sorted, 0.9)),
    p99_ms: round(percentile(sorted, 0.99)),
    max_ms: round(sorted[sorted.length - 1] as number),
    mean_ms: round(total / sorted.length),
  };
}

/** Identity of one source commit of one group partition (the benchmark uses a single topic). */
export function commitKey(group: string, partition: number, sourceOffset: number): string {
  return `${group}\u0000${partition}\u0000${sourceOffset}`;
}

/**
 * The moments one commit passed, all epoch milliseconds on this machine's clock. `*StoredAtMs` is when
 * JetStream stored the event (the message's stream timestamp); the others come from the events.
 */
interface CommitTrace {
  commitTimestampMs?: number;
  observedAtMs?: number;
  committedStoredAtMs?: number;
  translatedAtMs?: number;
  translatedStoredAtMs?: number;
  appliedAtMs?: number;
  appliedStoredAtMs?: number;
}

/** Stages in pipeline order, each the difference of two moments of a {@link CommitTrace}. */
export const STAGES = [
  {
    name: 'source_commit_to_collector_read',
    what: 'the source broker wrote the commit -> the collector read it from __consumer_offsets',
    from: 'commitTimestampMs',
    to: 'observedAtMs',
  },
  {
    name: 'collector_read_to_committed_stored',
    what: 'anchors resolved on the source and the OffsetCommitted event stored by JetStream',
    from: 'observedAtMs',
    to: 'committedStoredAtMs',
  },
  {
    name: 'committed_stored_to_translated',
    what: 'the translator received the event and located the anchor on the target',
    from: 'committedStoredAtMs',
    to: 'translatedAtMs',
  },
  {
    name: 'translated_to_translated_stored',
    what: 'the translator published the OffsetTranslated event',
    from: 'translatedAtMs',
    to: 'translatedStoredAtMs',
  },
  {
    name: 'translated_stored_to_applied',
    what: 'the committer received it, checked KV and the target, and its commit returned',
    from: 'translatedStoredAtMs',
    to: 'appliedAtMs',
  },
  {
    name: 'applied_to_applied_stored',
    what: 'the committer published the OffsetApplied event',
    from: 'appliedAtMs',
    to: 'appliedStoredAtMs',
  },
] as const satisfies readonly {
  name: string;
  what: string;
  from: keyof CommitTrace;
  to: keyof CommitTrace;
}[];

export type StageName = (typeof STAGES)[number]['name'];

/**
 * Follows selected commits through the three event streams and breaks their latency down by stage.
 * Only commits `track` was called for are kept, so memory grows with the measured commits alone.
 */
export class StageTracker {
  private readonly traces = new Map<string, CommitTrace>();

  track(key: string): void {
    if (!this.traces.has(key)) this.traces.set(key, {});
  }

  committed(event: OffsetCommitted, storedAtMs: number): void {
    const trace = this.traces.get(commitKey(event.group, event.partition, event.committedOffset));
    if (trace === undefined) return;
    trace.commitTimestampMs = event.commitTimestampMs;
    trace.observedAtMs = event.observedAtMs;
    trace.committedStoredAtMs = storedAtMs;
  }

  translated(event: OffsetTranslated, storedAtMs: number): void {
    const trace = this.traces.get(commitKey(event.group, event.partition, event.sourceOffset));
    if (trace === undefined) return;
    // A pending translation is published again on every attempt: the stage ends with the last one.
    trace.translatedAtMs = event.translatedAtMs;
    trace.translatedStoredAtMs = storedAtMs;
  }

  applied(event: OffsetApplied, storedAtMs: number): void {
    const trace = this.traces.get(commitKey(event.group, event.partition, event.sourceOffset));
    if (trace === undefined) return;
    trace.appliedAtMs = event.appliedAtMs;
    trace.appliedStoredAtMs = storedAtMs;
  }

  /** Per stage, the summary over the commits that have both of its moments. */
  summaries(): Record<StageName, LatencySummary | undefined> {
    const samples = Object.fromEntries(STAGES.map((s) => [s.name, [] as number[]])) as Record<
      StageName,
      number[]
    >;
    for (const trace of this.traces.values()) {
      for (const stage of STAGES) {
        const from = trace[stage.from];
        const to = trace[stage.to];
        if (from !== undefined && to !== undefined) samples[stage.name].push(to - from);
      }
    }
    return Object.fromEntries(STAGES.map((s) => [s.name, summarize(samples[s.name])])) as Record<
      StageName,
      LatencySummary | undefined
    >;
  }

  /** Commits seen in all three streams. */
  complete(): number {
    let count = 0;
    for (const t of this.traces.values()) {
      if (
        t.committedStoredAtMs !== undefined &&
        t.translatedAtMs !== undefined &&
        t.appliedAtMs !== undefined
      )
        count += 1;
    }
    return count;
  }
}
