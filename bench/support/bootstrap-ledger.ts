// Completion bookkeeping of the `bootstrap` scenario (bench/scenarios/bootstrap.ts): for one system, which
// of its group partitions the target shows at the committed source position, since when, and what is
// still missing. Pure: the scenario polls the target and passes in what it saw; no servers, no clock.
import { summarize } from './e2e-latency.js';

/**
 * When a target commit counts as applied. `exact`: it stands at the committed source position (what
 * offsetsync promises). `at-or-before`: at that position or before it, so the group replays records but
 * skips none (what MirrorMaker's checkpoints promise: it translates to its latest offset sync at or below).
 */
export type ApplyRule = 'exact' | 'at-or-before';

/** Where a group partition's target commit stands, compared with the committed source position. */
export type Verdict = 'exact' | 'behind' | 'ahead' | 'missing';

/**
 * Judges one target commit: `position` is the source position it stands for (see `sourcePositionAt` in
 * mm2-compare.ts), undefined when the target has no commit or it cannot be mapped.
 */
export function verdictOf(expected: number, position: number | undefined): Verdict {
  if (position === undefined) return 'missing';
  if (position === expected) return 'exact';
  return position < expected ? 'behind' : 'ahead';
}

/** Whether a verdict counts as applied under a rule. `ahead` never does: it skips records. */
export function counts(rule: ApplyRule, verdict: Verdict): boolean {
  return verdict === 'exact' || (rule === 'at-or-before' && verdict === 'behind');
}

const VERDICTS: readonly Verdict[] = ['missing', 'exact', 'behind', 'ahead'];

/** One system's summary, as the scenario's result line reports it. */
export interface LedgerSummary {
  group_partitions: number;
  applied: number;
  /** Verdicts of the last observation of every group partition (the final check when there was one). */
  exact: number;
  behind: number;
  ahead: number;
  missing: number;
  /** How many records before the committed position the `behind` ones stand: median and largest. */
  behind_records_p50: number | null;
  behind_records_max: number | null;
  not_applied: number;
  /** ms from the start until the last group partition was applied; null when some never were. */
  all_applied_ms: number | null;
  p50_ms: number | null;
  p99_ms: number | null;
  /**
   * Up to 10 group partitions not applied, for a first look: `group/partition expected <position>, at
   * <position the target stands for>` (`none` without a commit).
   */
  not_applied_sample: string[];
  /** The same for up to 10 group partitions whose target commit stands after the committed position. */
  ahead_sample: string[];
}

/**
 * The group partitions of one system: `groups` x `partitions`, each with the source position it
 * committed (`expected(g, p)`). A group partition is applied at the first observation that counts under
 * the rule and stays applied (the time-to-applied is that observation's time less `startMs`); a group is
 * complete once all of its partitions are, and the scenario stops polling it.
 */
export class BootstrapLedger {
  private readonly expected: Int32Array;
  private readonly appliedAtMs: Float64Array;
  private readonly last: Uint8Array;
  /** Source position of the last observation, -1 for none. */
  private readonly lastPosition: Int32Array;
  private readonly openPerGroup: Int32Array;
  private appliedCount = 0;
  private openGroups: number;

  constructor(
    readonly rule: ApplyRule,
    readonly groups: readonly string[],
    readonly partitions: number,
    expected: (group: number, partition: number) => number,
    readonly startMs: number,
  ) {
    const size = groups.length * partitions;
    this.expected = new Int32Array(size);
    for (let g = 0; g < groups.length; g++)
      for (let p = 0; p < partitions; p++) this.expected[g * partitions + p] = expected(g, p);
    this.appliedAtMs = new Float64Array(size).fill(Number.NaN);
    this.last = new Uint8Array(size);
    this.lastPosition = new Int32Array(size).fill(-1);
    this.openPerGroup = new Int32Array(groups.length).fill(partitions);
    this.openGroups = groups.length;
  }

  get size(): number {
    return this.expected.length;
  }

  get applied(): number {
    return this.appliedCount;
  }

  get complete(): boolean {
    return this.openGroups === 0;
  }

  expectedAt(group: number, partition: number): number {
    return this.expected[group * this.partitions + partition] as number;
  }

  /** Indexes of the groups with a partition not applied yet, ascending. */
  openGroupIndexes(): number[] {
    const open: number[] = [];
    for (let g = 0; g < this.groups.length; g++) if ((this.openPerGroup[g] as number) > 0) open.push(g);
    return open;
  }

  /**
   * Records one poll of group `group` at `atMs`: `positions(p)` is the source position the target commit
   * of partition `p` stands for (undefined: none). Returns how many partitions became applied.
   */
  observe(group: number, atMs: number, positions: (partition: number) => number | undefined): number {
    let newly = 0;
    for (let p = 0; p < this.partitions; p++) {
      const i = group * this.partitions + p;
      const position = positions(p);
      const verdict = verdictOf(this.expected[i] as number, position);
      this.last[i] = VERDICTS.indexOf(verdict);
      this.lastPosition[i] = position ?? -1;
      if (!Number.isNaN(this.appliedAtMs[i]) || !counts(this.rule, verdict)) continue;
      this.appliedAtMs[i] = atMs;
      this.appliedCount += 1;
      newly += 1;
      const open = (this.openPerGroup[group] as number) - 1;
      this.openPerGroup[group] = open;
      if (open === 0) this.openGroups -= 1;
    }
    return newly;
  }

  /** The summary; verdict counts are those of each group partition's last observation. */
  summary(): LedgerSummary {
    const times: number[] = [];
    const behindBy: number[] = [];
    const verdicts = { exact: 0, behind: 0, ahead: 0, missing: 0 };
    const sample: string[] = [];
    const aheadSample: string[] = [];
    const describe = (i: number): string => {
      const position = this.lastPosition[i] as number;
      return `${this.groups[Math.floor(i / this.partitions)]}/${i % this.partitions} expected ${this.expected[i]}, at ${position < 0 ? 'none' : position}`;
    };
    for (let i = 0; i < this.size; i++) {
      const at = this.appliedAtMs[i] as number;
      if (!Number.isNaN(at)) times.push(at - this.startMs);
      else if (sample.length < 10) sample.push(describe(i));
      const verdict = VERDICTS[this.last[i] as number] as Verdict;
      verdicts[verdict] += 1;
      if (verdict === 'behind')
        behindBy.push((this.expected[i] as number) - (this.lastPosition[i] as number));
      if (verdict === 'ahead' && aheadSample.length < 10) aheadSample.push(describe(i));
    }
    const s = summarize(times);
    const behind = summarize(behindBy);
    const all = times.length === this.size && this.size > 0;
    return {
      group_partitions: this.size,
      applied: times.length,
      ...verdicts,
      behind_records_p50: behind?.p50_ms ?? null,
      behind_records_max: behind?.max_ms ?? null,
      not_applied: this.size - times.length,
      all_applied_ms: all ? (s?.max_ms ?? null) : null,
      p50_ms: s?.p50_ms ?? null,
      p99_ms: s?.p99_ms ?? null,
      not_applied_sample: sample,
      ahead_sample: aheadSample,
    };
  }
}

/**
 * The order one poll round visits the open groups of several systems: the first open group of each
 * system in turn, then the second of each, and so on, so no system's groups wait behind another's.
 */
export function interleave<T>(lists: ReadonlyArray<readonly T[]>): T[] {
  const out: T[] = [];
  const longest = Math.max(0, ...lists.map((l) => l.length));
  for (let i = 0; i < longest; i++) for (const list of lists) if (i < list.length) out.push(list[i] as T);
  return out;
}

/** Runs `work` over `items` with at most `limit` at once; resolves when all are done. */
export async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      await work(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
