// What the sandbox reports of a group's move: where offsetsync put the group on each target, and the move
// judged by record identity, not by offsets: offsets differ between the clusters, the records do not.

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

/** The line `offsetsync sandbox` prints for the move of `group` to `target`. */
export function formatMoveLine(group: string, target: string, count: MoveCount): string {
  return `moved group ${group} to ${target}: replayed=${count.replayed} skipped=${count.skipped}`;
}

/** Where a group's committed position is on one cluster: the topic there and the offset. */
export interface Position {
  cluster: string;
  topic: string;
  offset: number;
}

/**
 * The position of a group on one partition, on the source and on each target side by side: `partition 0:
 * source demo-orders 1103 -> target demo-orders 1203, cloud source.demo-orders 1353`. Pure.
 */
export function formatPositions(partition: number, source: Position, targets: readonly Position[]): string {
  const at = (p: Position) => `${p.cluster} ${p.topic} ${p.offset}`;
  return `partition ${partition}: ${at(source)} -> ${targets.map(at).join(', ')}`;
}
