// Names under which links appear in grpc.health.v1 and in logs, and which link states count as serving.
// Pure.
import { LinkState, linkStateToJSON } from '@offsetsync/contracts';

/** The grpc.health.v1 service name of one link: `offsetsync.link/<source>/<target>`. */
export function linkServiceName(source: string, target: string): string {
  return `offsetsync.link/${source}/${target}`;
}

/** The grpc.health.v1 service name of the offsetsync health API itself. */
export const HEALTH_API_SERVICE_NAME = 'offsetsync.v1.OffsetSyncHealth';

/** The name of a link state as people read it: `SOURCE_ONLY` for LINK_STATE_SOURCE_ONLY. */
export function linkStateName(state: LinkState): string {
  return linkStateToJSON(state).replace(/^LINK_STATE_/, '');
}

/**
 * Whether a link in this state answers SERVING: offsets reach the target (HEALTHY), perhaps late
 * (LAGGING). One-sided, stalled, down or not yet known links are NOT_SERVING.
 */
export function linkIsServing(state: LinkState): boolean {
  return state === LinkState.LINK_STATE_HEALTHY || state === LinkState.LINK_STATE_LAGGING;
}

const SEVERITY: Record<number, number> = {
  [LinkState.LINK_STATE_HEALTHY]: 0,
  [LinkState.LINK_STATE_LAGGING]: 1,
  [LinkState.LINK_STATE_STALLED]: 2,
  [LinkState.LINK_STATE_SOURCE_ONLY]: 3,
  [LinkState.LINK_STATE_TARGET_ONLY]: 3,
  [LinkState.LINK_STATE_DOWN]: 4,
};

/** The worst of several link states; UNSPECIFIED for none. */
export function worstState(states: readonly LinkState[]): LinkState {
  let worst = LinkState.LINK_STATE_UNSPECIFIED;
  for (const state of states) {
    if (worst === LinkState.LINK_STATE_UNSPECIFIED || (SEVERITY[state] ?? 5) > (SEVERITY[worst] ?? 5))
      worst = state;
  }
  return worst;
}
