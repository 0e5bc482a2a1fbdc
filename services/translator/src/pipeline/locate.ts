// The locate step of the translation pipeline: where the source commits of a batch resume on the
// target, many at a time (the locator sends one request per broker per round), each from the learned
// point below its anchors when there is one. A commit without anchors (an empty source partition) needs
// only the target partition's bounds.
import type { OffsetCommitted, OffsetSyncError } from '@offsetsync/contracts';
import { partitionKey, type AnchorLocator, type LocateRequest } from '../anchor-locator.js';
import type { LearnedPoint } from '../position-memory.js';
import type { Location, TargetBounds } from '../translation-plan.js';

/** One source commit to locate, in its topic's copy on the target, with the learned point below its anchors, if any. */
export interface LocateInput {
  event: OffsetCommitted;
  /** The topic's name on the target. */
  targetTopic: string;
  floor: LearnedPoint | undefined;
}

/** Where one commit resumes on the target, as far as the locator could tell. */
export interface AnchorLocations {
  /** Undefined when the commit has no anchors. */
  location?: Location | undefined;
  /** The learned point did not hold on the target: the partition's points must be forgotten. */
  floorFailed?: boolean;
  /** The target partition's bounds, when they could be read. */
  bounds?: TargetBounds | undefined;
}

/** The locator calls this step uses. */
export type Locator = Pick<AnchorLocator, 'locate' | 'partitionBounds'>;

/** The locator's request for `input` (in the target topic); undefined when the event has no anchor. Pure. */
export function locateRequest({ event, targetTopic, floor }: LocateInput): LocateRequest | undefined {
  if (event.nextRecord === undefined && event.lastConsumed === undefined) return undefined;
  return {
    topic: targetTopic,
    partition: event.partition,
    next: event.nextRecord,
    last: event.lastConsumed,
    floor,
    distinctAround: event.distinctAround,
  };
}

/** Locates every input; the results in input order. Rejects when the target cannot be read. */
export async function locateAnchors(
  locator: Locator,
  inputs: readonly LocateInput[],
): Promise<AnchorLocations[]> {
  if (inputs.length === 0) return [];
  const requests = inputs.map((input) => locateRequest(input));
  const asked = requests.filter((r): r is LocateRequest => r !== undefined);
  const { results, bounds } = await locator.locate(asked);
  const anchorless = inputs.filter((_, i) => requests[i] === undefined);
  const extraBounds = await locator.partitionBounds(
    anchorless.map(({ event, targetTopic }) => ({ topic: targetTopic, partition: event.partition })),
  );
  let next = 0;
  return inputs.map(({ event, targetTopic }, i) => {
    const key = partitionKey(targetTopic, event.partition);
    const partitionBounds = bounds.get(key) ?? extraBounds.get(key);
    if (requests[i] === undefined) return { bounds: partitionBounds };
    const result = results[next++]!;
    return { location: result.location, floorFailed: result.floorFailed, bounds: partitionBounds };
  });
}

/** The errors of the target reads that failed, one per commit that could not be read. Pure. */
export function readFailures(located: readonly AnchorLocations[]): OffsetSyncError[] {
  return located.flatMap(({ location }) =>
    location?.kind === 'failed' && location.error !== undefined ? [location.error] : [],
  );
}
