// Judges a group's move from the source to the target by record identity, not by offsets: offsets
// differ between the clusters, the records do not.

/** What a consumer that moved saw again and what it never saw. */
export interface MoveCount {
  /** Reads on the target of records the group had already consumed on the source (or of records that are no copy of a remaining source record). */
  replayed: number;
  /** Records the group had not consumed on the source and did not read on the target either. */
  skipped: number;
}

/**
 * Counts replayed and skipped records of a move. `sourceRecords` are the ids of every record of the
 * source topic, `consumedOnSource` those the group consumed there before it moved, `readOnTarget` the
 * ids of what it then read on the target, in any order, with repeats. A replicator's duplicate of a
 * record not consumed yet counts as neither: the application sees it, but it was not done before.
 */
export function countMove(input: {
  sourceRecords: Iterable<string>;
  consumedOnSource: Iterable<string>;
  readOnTarget: Iterable<string>;
}): MoveCount {
  const consumed = new Set(input.consumedOnSource);
  const remaining = new Set([...input.sourceRecords].filter((id) => !consumed.has(id)));
  const read = new Set<string>();
  let replayed = 0;
  for (const id of input.readOnTarget) {
    if (!remaining.has(id)) replayed += 1;
    read.add(id);
  }
  let skipped = 0;
  for (const id of remaining) if (!read.has(id)) skipped += 1;
  return { replayed, skipped };
}

/** The one line `offsetsync sandbox` prints for a move. */
export function formatMoveLine(group: string, count: MoveCount): string {
  return `moved group ${group}: replayed=${count.replayed} skipped=${count.skipped}`;
}
