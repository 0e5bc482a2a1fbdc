// The state of one source -> target link as a pure function of the instances heard from, the flow of
// events on the link and the clock. No I/O: the health service feeds it and publishes the answer.
import { ErrorCodes, LinkState, ServiceRole, type Problem } from '@offsetsync/contracts';

/** One instance as its latest heartbeat describes it. */
export interface InstanceSighting {
  role: ServiceRole;
  instanceId: string;
  sourceClusters: readonly string[];
  targetCluster: string;
  /** A committer's sources whose links it only observes (commits nothing); default none. */
  observedSourceClusters?: readonly string[];
  /** When its latest heartbeat was sent (epoch ms). */
  lastHeartbeatMs: number;
  /** Its heartbeat interval (ms). */
  intervalMs: number;
  /** Work it holds but has not finished. */
  pending: number;
  /** Problems of its latest heartbeat. */
  problems?: readonly Problem[];
}

/** How events move on the link, from the partition statuses. */
export interface LinkFlow {
  /** The oldest source commit not handled on the target yet (observedAtMs), if any. */
  oldestWaitingSinceMs: number | undefined;
  /** Partitions whose latest source commit waits. */
  waitingPartitions: number;
  /** End-to-end lag of the most recently applied commit (ms); undefined when nothing was applied. */
  lastEndToEndLagMs: number | undefined;
}

/** Thresholds from config `health`. */
export interface LinkThresholds {
  stalledAfterMs: number;
  laggingAboveMs: number;
  missingAfterHeartbeats: number;
}

export interface LinkVerdict {
  state: LinkState;
  reason: string;
  /** The instances serving the link that count as alive. */
  alive: InstanceSighting[];
  /** A committer alive on the link only observes it: nothing is committed on the target. */
  observing: boolean;
}

/**
 * When health could hear the services' heartbeats: since `sinceMs` (its start, or its last recovery), and
 * not since `lostAtMs` while its own NATS connection or its read of the heartbeats is down. A service is
 * not missing for a silence health could not have heard: blaming the collector (or anyone) for health's
 * own lost connection would send an operator to the wrong side.
 */
export interface Hearing {
  sinceMs: number;
  lostAtMs?: number;
}

/** Health heard everything: no outage of its own. */
export const HEARD_THROUGHOUT: Hearing = { sinceMs: Number.NEGATIVE_INFINITY };

/**
 * Whether an instance counts as running at `nowMs`: a heartbeat within the allowed missed intervals of
 * the time health could hear. While health cannot hear, the time stands still at the loss; after it hears
 * again, silence counts from then.
 */
export function isAlive(
  instance: InstanceSighting,
  nowMs: number,
  thresholds: LinkThresholds,
  hearing: Hearing = HEARD_THROUGHOUT,
): boolean {
  const at = Math.min(nowMs, hearing.lostAtMs ?? nowMs);
  const from = Math.max(instance.lastHeartbeatMs, hearing.sinceMs);
  return at - from <= thresholds.missingAfterHeartbeats * instance.intervalMs;
}

/** Whether an instance serves the link in its role. */
function servesLink(instance: InstanceSighting, source: string, target: string): boolean {
  switch (instance.role) {
    case ServiceRole.SERVICE_ROLE_COLLECTOR:
      return instance.sourceClusters.includes(source);
    case ServiceRole.SERVICE_ROLE_TRANSLATOR:
    case ServiceRole.SERVICE_ROLE_COMMITTER:
      return instance.targetCluster === target && instance.sourceClusters.includes(source);
    default:
      return false;
  }
}

/** Seconds with one decimal, for reasons people read. */
function seconds(ms: number): string {
  return `${(Math.max(0, ms) / 1000).toFixed(1)} s`;
}

const ROLE_WORDS: Partial<Record<ServiceRole, string>> = {
  [ServiceRole.SERVICE_ROLE_COLLECTOR]: 'collector',
  [ServiceRole.SERVICE_ROLE_TRANSLATOR]: 'translator',
  [ServiceRole.SERVICE_ROLE_COMMITTER]: 'committer',
};

function joinWords(words: string[]): string {
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
}

/**
 * Correlates one link. Order of precedence: DOWN (no role alive), SOURCE_ONLY / TARGET_ONLY (a side
 * missing), STALLED (a source commit waits longer than stalledAfterMs), LAGGING (end-to-end lag above
 * laggingAboveMs), HEALTHY.
 */
export function correlateLink(
  link: { source: string; target: string },
  instances: readonly InstanceSighting[],
  flow: LinkFlow,
  thresholds: LinkThresholds,
  nowMs: number,
  hearing: Hearing = HEARD_THROUGHOUT,
): LinkVerdict {
  const serving = instances.filter((i) => servesLink(i, link.source, link.target));
  const alive = serving.filter((i) => isAlive(i, nowMs, thresholds, hearing));
  const has = (role: ServiceRole) => alive.some((i) => i.role === role);
  const collector = has(ServiceRole.SERVICE_ROLE_COLLECTOR);
  const translator = has(ServiceRole.SERVICE_ROLE_TRANSLATOR);
  const committer = has(ServiceRole.SERVICE_ROLE_COMMITTER);
  const src = JSON.stringify(link.source);
  const tgt = JSON.stringify(link.target);

  const observing = alive.some(
    (i) =>
      i.role === ServiceRole.SERVICE_ROLE_COMMITTER && (i.observedSourceClusters ?? []).includes(link.source),
  );
  /** "committer c-1 last heard 2.0 s ago" for every missing role that was seen before. */
  const lastHeard = (roles: ServiceRole[]): string => {
    const notes = roles.flatMap((role) => {
      const last = serving
        .filter((i) => i.role === role)
        .sort((a, b) => b.lastHeartbeatMs - a.lastHeartbeatMs)[0];
      return last === undefined
        ? []
        : [`${ROLE_WORDS[role]} ${last.instanceId} last heard ${seconds(nowMs - last.lastHeartbeatMs)} ago`];
    });
    return notes.length === 0 ? '' : ` (${notes.join('; ')})`;
  };
  const access = accessProblems(alive);
  const observes = observing
    ? `; the link observes: nothing is committed on ${JSON.stringify(link.target)}`
    : '';
  const deaf =
    hearing.lostAtMs === undefined
      ? ''
      : `; health has not heard from NATS for ${seconds(nowMs - hearing.lostAtMs)}: this is the state it last knew`;
  const verdict = (state: LinkState, reason: string): LinkVerdict => ({
    state,
    reason: reason + observes + access + deaf,
    alive,
    observing,
  });

  if (!collector && !translator && !committer) {
    return verdict(
      LinkState.LINK_STATE_DOWN,
      `no heartbeat from a collector for ${src} nor a translator or committer for ${tgt}` +
        lastHeard([
          ServiceRole.SERVICE_ROLE_COLLECTOR,
          ServiceRole.SERVICE_ROLE_TRANSLATOR,
          ServiceRole.SERVICE_ROLE_COMMITTER,
        ]),
    );
  }
  const missingTarget = [
    ...(translator ? [] : [ServiceRole.SERVICE_ROLE_TRANSLATOR]),
    ...(committer ? [] : [ServiceRole.SERVICE_ROLE_COMMITTER]),
  ];
  if (collector && missingTarget.length > 0) {
    const missing = joinWords(missingTarget.map((r) => `no ${ROLE_WORDS[r]}`));
    return verdict(
      LinkState.LINK_STATE_SOURCE_ONLY,
      `a collector runs for ${src}, but ${missing} runs for ${tgt}: commits are read and never applied` +
        lastHeard(missingTarget),
    );
  }
  if (!collector) {
    const running = joinWords(
      [translator ? 'a translator' : '', committer ? 'a committer' : ''].filter((w) => w !== ''),
    );
    const also = missingTarget.length > 0 ? ` (and no ${ROLE_WORDS[missingTarget[0]!]} for ${tgt})` : '';
    return verdict(
      LinkState.LINK_STATE_TARGET_ONLY,
      `${running} ${running.includes(' and ') ? 'run' : 'runs'} for ${tgt}, but no collector runs for ${src}: nothing arrives to apply${also}` +
        lastHeard([ServiceRole.SERVICE_ROLE_COLLECTOR]),
    );
  }
  const waitedMs = flow.oldestWaitingSinceMs === undefined ? 0 : nowMs - flow.oldestWaitingSinceMs;
  if (flow.oldestWaitingSinceMs !== undefined && waitedMs > thresholds.stalledAfterMs) {
    return verdict(
      LinkState.LINK_STATE_STALLED,
      `${flow.waitingPartitions} partition(s) have source commits not applied on ${tgt}; the oldest waits for ${seconds(waitedMs)} (limit ${seconds(thresholds.stalledAfterMs)})`,
    );
  }
  const lagMs = Math.max(flow.lastEndToEndLagMs ?? 0, waitedMs);
  if (lagMs > thresholds.laggingAboveMs) {
    return verdict(
      LinkState.LINK_STATE_LAGGING,
      `end-to-end lag ${seconds(lagMs)} is above the limit of ${seconds(thresholds.laggingAboveMs)}`,
    );
  }
  return verdict(
    LinkState.LINK_STATE_HEALTHY,
    flow.lastEndToEndLagMs === undefined
      ? `collector, translator and committer run${observing ? '' : '; no commit applied yet'}`
      : `collector, translator and committer run; the latest commit reached ${tgt} ${seconds(flow.lastEndToEndLagMs)} after the source commit`,
  );
}

/** Problem codes that mean credentials or permissions are wrong: named in the link's reason, whatever its state. */
const ACCESS_CODES: ReadonlySet<string> = new Set([ErrorCodes.AUTH_FAILED, ErrorCodes.NOT_AUTHORIZED]);

/** "; committer c-1 reports NOT_AUTHORIZED on GROUP:app" for every access problem of an alive instance. */
function accessProblems(alive: readonly InstanceSighting[]): string {
  const notes = alive.flatMap((instance) =>
    (instance.problems ?? [])
      .filter((problem) => ACCESS_CODES.has(problem.code))
      .map(
        (problem) =>
          `${ROLE_WORDS[instance.role] ?? 'instance'} ${instance.instanceId} reports ${problem.code}${problem.resource === '' ? '' : ` on ${problem.resource}`}`,
      ),
  );
  return notes.length === 0 ? '' : `; ${notes.join('; ')}`;
}
