// The locate step of the translation pipeline: where the anchors of a batch's source commits are on the
// target, many at a time (the locator sends one request per broker per round). The next record decides
// alone when it is found; the last consumed record is looked for only when not. A commit without anchors
// (an empty source partition) needs only the target partition's bounds.
import type { OffsetCommitted, OffsetSyncError } from '@offsetsync/contracts';
import { partitionKey, type AnchorLocator, type LocateRequest } from '../anchor-locator.js';
import type { Location, TargetBounds } from '../translation-plan.js';

/** One source commit to locate, with the learned offset delta of its partition, if any. */
export interface LocateInput {
  event: OffsetCommitted;
  delta: number | undefined;
}

/** Where one commit's anchors are on the target, as far as the locator could tell. */
export interface AnchorLocations {
  /** The next record's location; undefined when the event has no such anchor. */
  next?: Location | undefined;
  /** The last consumed record's location; undefined when not needed or the event has no such anchor. */
  last?: Location | undefined;
  /** The target partition's bounds, when they could be read. */
  bounds?: TargetBounds | undefined;
}

/** The locator calls this step uses. */
export type Locator = Pick<AnchorLocator, 'locate' | 'partitionBounds'>;

/** The locator's request for one anchor of `event`; undefined when the event has no such anchor. Pure. */
export function locateRequest(
  event: OffsetCommitted,
  role: 'next' | 'last',
  delta: number | undefined,
): LocateRequest | undefined {
  const anchor = role === 'next' ? event.nextRecord : event.lastConsumed;
  if (anchor === undefined) return undefined;
  return { topic: event.topic, partition: event.partition, anchor, role, delta };
}

/** Locates the requests that exist; the locations in the order of `requests`, undefined where none. */
async function locateSome(
  locator: Locator,
  requests: readonly (LocateRequest | undefined)[],
): Promise<{ locations: (Location | undefined)[]; bounds: Map<string, TargetBounds> }> {
  const asked = requests.filter((r): r is LocateRequest => r !== undefined);
  const { locations, bounds } = await locator.locate(asked);
  let i = 0;
  return { locations: requests.map((r) => (r === undefined ? undefined : locations[i++])), bounds };
}

/** Locates the anchors of every input; the results in input order. Rejects when the target cannot be read. */
export async function locateAnchors(
  locator: Locator,
  inputs: readonly LocateInput[],
): Promise<AnchorLocations[]> {
  if (inputs.length === 0) return [];
  const first = await locateSome(
    locator,
    inputs.map((input) => locateRequest(input.event, 'next', input.delta)),
  );
  const second = await locateSome(
    locator,
    inputs.map((input, i) =>
      first.locations[i]?.kind === 'found' ? undefined : locateRequest(input.event, 'last', input.delta),
    ),
  );
  const anchorless = inputs.filter(
    ({ event }) => event.nextRecord === undefined && event.lastConsumed === undefined,
  );
  const extraBounds = await locator.partitionBounds(
    anchorless.map(({ event }) => ({ topic: event.topic, partition: event.partition })),
  );
  return inputs.map(({ event }, i) => {
    const key = partitionKey(event.topic, event.partition);
    return {
      next: first.locations[i],
      last: second.locations[i],
      bounds: first.bounds.get(key) ?? second.bounds.get(key) ?? extraBounds.get(key),
    };
  });
}

/** The errors of the target reads that failed, one per commit whose anchor could not be read. Pure. */
export function readFailures(located: readonly AnchorLocations[]): OffsetSyncError[] {
  return located.flatMap(({ next, last }) =>
    [next, last].flatMap((l) => (l?.kind === 'failed' && l.error !== undefined ? [l.error] : [])),
  );
}
