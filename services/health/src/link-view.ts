// The published view of every link: the latest status of each (ListLinks, the first answers of
// WatchLinks), its grpc.health.v1 name SERVING or NOT_SERVING, watchers told of every change, and a log
// line for every change of state. The health worker feeds it one evaluation of all links at a time.
import type { LinkStatus } from '@offsetsync/contracts';
import { ServingStatus, type HealthStatusBoard, type Logger } from '@offsetsync/runtime';
import type { LinkRef } from './health-state.js';
import { linkIsServing, linkServiceName, linkStateName } from './link-names.js';

/** A link's status as last published, and the instances running it then. */
interface PublishedLink {
  status: LinkStatus;
  /** `role/instance` of every running instance, sorted and joined: compared, never shown. */
  alive: string;
}

/** How a link's new status differs from the one published before. */
interface LinkChange {
  /** The status to publish: `changedAtMs` is now when the state changed, else carried over. */
  published: PublishedLink;
  /** The state changed (or the link is new). */
  stateChanged: boolean;
  /** Watchers must hear of it: the state or the running instances changed. */
  notify: boolean;
}

/** Compares a link's new status with the one published before. Pure. */
function linkChange(previous: PublishedLink | undefined, status: LinkStatus, nowMs: number): LinkChange {
  const alive = status.instances
    .map((i) => `${i.role}/${i.instanceId}`)
    .sort()
    .join(',');
  const stateChanged = previous === undefined || previous.status.state !== status.state;
  const changedAtMs = stateChanged ? nowMs : previous.status.changedAtMs;
  return {
    published: { status: { ...status, changedAtMs }, alive },
    stateChanged,
    notify: stateChanged || previous.alive !== alive,
  };
}

/** The links as the API and grpc.health.v1 show them. */
export class LinkView {
  private readonly current = new Map<string, PublishedLink>();
  private readonly listeners = new Set<(status: LinkStatus) => void>();

  constructor(
    private readonly board: HealthStatusBoard,
    private readonly logger: Logger,
  ) {}

  /** The current status of every known link, in the order they were first published. */
  links(): LinkStatus[] {
    return [...this.current.values()].map((c) => c.status);
  }

  /** Calls `listener` with each link status that changed, until the returned function is called. */
  onLinkChange(listener: (status: LinkStatus) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Publishes one evaluation of every link at `nowMs`: sets each link's grpc.health.v1 name, logs each change
   * of state and tells watchers of every change. A link published before and missing from `evaluated` is
   * no longer reported (removed from the config, its instances gone): it leaves the list and its
   * grpc.health.v1 name is removed. Returns whether every link serves.
   */
  publish(evaluated: ReadonlyArray<{ link: LinkRef; status: LinkStatus }>, nowMs: number): boolean {
    const reported = new Set(evaluated.map(({ link }) => linkServiceName(link.source, link.target)));
    for (const key of [...this.current.keys()]) {
      if (reported.has(key)) continue;
      this.current.delete(key);
      this.board.remove(key);
      this.logger.info(
        { link: key },
        'link no longer reported: not in the config and none of its instances runs',
      );
    }
    let allServing = true;
    for (const { link, status } of evaluated) {
      const key = linkServiceName(link.source, link.target);
      const { published, stateChanged, notify } = linkChange(this.current.get(key), status, nowMs);
      this.current.set(key, published);
      const serving = linkIsServing(published.status.state);
      allServing &&= serving;
      this.board.set(key, serving ? ServingStatus.SERVING : ServingStatus.NOT_SERVING);
      if (stateChanged) {
        this.logger.info(
          { link: key, state: linkStateName(published.status.state), reason: published.status.reason },
          'link state changed',
        );
      }
      if (notify) for (const listener of this.listeners) listener(published.status);
    }
    return allServing;
  }
}
