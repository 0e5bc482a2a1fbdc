// Where the first copies of anchors were found on the target, per partition of each link: each exact
// translation teaches one point (source offset -> target offset of its first copy). Replication keeps
// order, so the first copy of any later source record lies after a learned point: the nearest point below
// an anchor is a floor the search can start from, which needs no timestamp lookup and, unlike a
// timestamp lookup, is not misled by a record stamped in the future. A point is used only after the
// record at its target offset was read again and still is its anchor's copy (the target may have been
// truncated, deleted and recreated since), and every point of a partition is forgotten when one fails
// that check. A point also names the topic id it was learned under: a topic deleted and recreated (even
// with the same record at the same offset) gets a new id, and its points no longer hold.
import type { Anchor } from '@offsetsync/contracts';

/** A learned point: the anchor (with its source offset), the target offset of its first copy, the topic's id. */
export interface LearnedPoint {
  anchor: Anchor;
  targetOffset: number;
  topicId: string;
}

/** Points kept per partition: the most recently learned ones. */
const POINTS_PER_PARTITION = 64;

export class PositionMemory {
  /** Points by partition, sorted by source offset. */
  private readonly points = new Map<string, LearnedPoint[]>();

  private static key(source: string, target: string, topic: string, partition: number): string {
    return `${source}\u0000${target}\u0000${topic}\u0000${partition}`;
  }

  /** The learned point with the greatest source offset below `sourceOffset`, if any. */
  floor(
    source: string,
    target: string,
    topic: string,
    partition: number,
    sourceOffset: number,
  ): LearnedPoint | undefined {
    const points = this.points.get(PositionMemory.key(source, target, topic, partition)) ?? [];
    let best: LearnedPoint | undefined;
    for (const point of points) {
      if (point.anchor.offset < sourceOffset) best = point;
      else break;
    }
    return best;
  }

  learn(source: string, target: string, topic: string, partition: number, point: LearnedPoint): void {
    const key = PositionMemory.key(source, target, topic, partition);
    const points = (this.points.get(key) ?? []).filter((p) => p.anchor.offset !== point.anchor.offset);
    points.push(point);
    points.sort((a, b) => a.anchor.offset - b.anchor.offset);
    // Keep the points nearest the newest one: groups mostly move forward.
    while (points.length > POINTS_PER_PARTITION) {
      const newest = point.anchor.offset;
      const first = points[0]!;
      const last = points[points.length - 1]!;
      if (Math.abs(first.anchor.offset - newest) >= Math.abs(last.anchor.offset - newest)) points.shift();
      else points.pop();
    }
    this.points.set(key, points);
  }

  /** Forgets every point of the partition: one of them no longer holds on the target. */
  forget(source: string, target: string, topic: string, partition: number): void {
    this.points.delete(PositionMemory.key(source, target, topic, partition));
  }
}
