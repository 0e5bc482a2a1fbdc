// Pure bookkeeping of the offsetsync vs MirrorMaker 2 scenarios (bench/scenarios): which source record a
// target offset holds, what a group that moved replays and skips, and how long after a source commit the
// target showed it. No servers, no clock.

/** The value every benchmark record carries: `id:<partition>:<index in the source partition>`. */
export function recordId(partition: number, index: number): string {
  return `id:${partition}:${index}`;
}

/** The source index of a benchmark record's value, or undefined for anything else (the target's own records). */
export function sourceIndexOf(value: string | null | undefined): number | undefined {
  const match = value === null || value === undefined ? null : /^id:\d+:(\d+)$/.exec(value);
  return match === null ? undefined : Number(match[1]);
}

/** What a group that moved replays and skips in one partition. */
export interface MoveCounts {
  /** Records read on the target that the group had consumed on the source already. */
  replayed: number;
  /** Source records after the group's position never read on the target. */
  skipped: number;
}

/**
 * Counts by record identity what a group reads on the target from `committed` on: `targetRecords[o]` is
 * the source index of the record at target offset `o` (undefined for records of the target's own). The
 * group had consumed source indexes `0 .. sourcePosition - 1` of a partition of `sourceRecords` records.
 * A read of a consumed record (or of one of the target's own) is a replay; a remaining source record never
 * read is a skip. A replicator's duplicate of a remaining record counts as neither.
 */
export function countMove(input: {
  targetRecords: ReadonlyArray<number | undefined>;
  committed: number;
  sourcePosition: number;
  sourceRecords: number;
}): MoveCounts {
  const seen = new Set<number>();
  let replayed = 0;
  for (let o = Math.max(0, input.committed); o < input.targetRecords.length; o++) {
    const index = input.targetRecords[o];
    if (index === undefined || index < input.sourcePosition) replayed += 1;
    else seen.add(index);
  }
  let skipped = 0;
  for (let i = input.sourcePosition; i < input.sourceRecords; i++) if (!seen.has(i)) skipped += 1;
  return { replayed, skipped };
}

/**
 * The source position a target committed offset stands for: the source index of the first source record at
 * or after it (what the group reads next), or `sourceEnd` when none follows. Undefined while the target
 * copy does not reach that far yet.
 */
export function sourcePositionAt(
  targetRecords: ReadonlyArray<number | undefined>,
  committed: number,
  copiedAll: boolean,
  sourceEnd: number,
): number | undefined {
  for (let o = Math.max(0, committed); o < targetRecords.length; o++) {
    const index = targetRecords[o];
    if (index !== undefined) return index;
  }
  return copiedAll ? sourceEnd : undefined;
}

/** One source commit of a group partition: when it was sent and the offset. */
export interface SourceCommit {
  atMs: number;
  offset: number;
}

/** One poll of the target: when, and the source position its committed offset stands for. */
export interface TargetObservation {
  atMs: number;
  sourcePosition: number;
}

/** What became of one source commit on the target. */
export interface CommitLatency {
  offset: number;
  /** ms from the source commit until the target first stood past the previous commit; undefined if never. */
  latencyMs: number | undefined;
  /** Source records between this commit and where the target then stood (0 = exact, > 0 behind). */
  recordsBehind: number | undefined;
}

/**
 * Matches the source commits of one group partition (ascending in time and offset) with the polls of its
 * target committed offset (ascending in time). A commit counts as shown on the target at the first poll at
 * or after it where the target stands past the previous commit (`previousOffset` for the first): a system
 * that translates exactly then stands at the commit, one that translates to an earlier offset sync stands
 * between the two, and a later commit that supersedes it shows it too. The same rule for both systems.
 */
export function matchCommits(
  commits: readonly SourceCommit[],
  observations: readonly TargetObservation[],
  previousOffset: number,
): CommitLatency[] {
  const results: CommitLatency[] = [];
  let previous = previousOffset;
  let from = 0;
  for (const commit of commits) {
    while (from < observations.length && (observations[from] as TargetObservation).atMs < commit.atMs) from++;
    let found: TargetObservation | undefined;
    for (let i = from; i < observations.length; i++) {
      const observation = observations[i] as TargetObservation;
      if (observation.sourcePosition > previous) {
        found = observation;
        break;
      }
    }
    results.push({
      offset: commit.offset,
      latencyMs: found === undefined ? undefined : found.atMs - commit.atMs,
      recordsBehind: found === undefined ? undefined : Math.max(0, commit.offset - found.sourcePosition),
    });
    previous = commit.offset;
  }
  return results;
}
