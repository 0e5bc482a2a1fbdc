// Whether a target offset lies within a target partition's log. A committed offset names the next record
// a consumer reads, so every offset from the log start offset up to and including the log end offset
// (the high watermark: the offset the next appended record gets) is a position a consumer can resume
// from. An offset past the log end points at records that do not exist (a consumer there would skip
// every record written until the log reaches it); one below the log start points at deleted records.
// Neither is ever committed. Pure.
import type { PartitionBounds } from '@offsetsync/kafka';

/** Where an offset lies relative to a partition's log. */
export type LogBoundsVerdict = 'within' | 'above-end' | 'below-start';

/** Where `offset` lies relative to `bounds`: log start <= offset <= log end is within. Pure. */
export function logBoundsVerdict(offset: number, bounds: PartitionBounds): LogBoundsVerdict {
  if (offset > bounds.highWatermark) return 'above-end';
  if (offset < bounds.logStartOffset) return 'below-start';
  return 'within';
}

/** What an out-of-bounds offset's OffsetApplied event says, for `topic`-`partition` on the target. Pure. */
export function outOfBoundsDetail(
  offset: number,
  verdict: Exclude<LogBoundsVerdict, 'within'>,
  bounds: PartitionBounds,
  partition: { topic: string; partition: number },
): string {
  const where = `${partition.topic}-${partition.partition}`;
  return verdict === 'above-end'
    ? `target offset ${offset} is above the log end offset ${bounds.highWatermark} of ${where} on the target`
    : `target offset ${offset} is below the log start offset ${bounds.logStartOffset} of ${where} on the target`;
}
