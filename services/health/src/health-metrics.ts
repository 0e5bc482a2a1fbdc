// Health's metrics: the state of every link and the heartbeat of every instance, for alerts and the
// dashboard (deploy/helm/offsetsync/files). Observable gauges read at collection time from what health
// already knows; the samples are pure functions of it, so they are tested without a meter.
import type { Meter, ObservableGauge } from '@opentelemetry/api';
import { LinkState, ServiceRole, type LinkStatus } from '@offsetsync/contracts';
import type { LinkRef } from './health-state.js';
import {
  HEARD_THROUGHOUT,
  isAlive,
  type Hearing,
  type InstanceSighting,
  type LinkThresholds,
} from './link-correlation.js';
import { linkStateName } from './link-names.js';

/** One sample of a gauge. */
export interface GaugeSample {
  value: number;
  attributes: Record<string, string>;
}

/** The states `offsetsync_link_state` has a series for, each link one series per state. */
const LINK_STATES: readonly LinkState[] = [
  LinkState.LINK_STATE_HEALTHY,
  LinkState.LINK_STATE_SOURCE_ONLY,
  LinkState.LINK_STATE_TARGET_ONLY,
  LinkState.LINK_STATE_STALLED,
  LinkState.LINK_STATE_LAGGING,
  LinkState.LINK_STATE_DOWN,
];

/**
 * An instance not heard from for longer than this is left out: the heartbeats stream keeps a heartbeat a
 * day (packages/jetstream provisioning), so a health restarted later would not know it either.
 */
const FORGET_INSTANCE_AFTER_MS = 24 * 60 * 60 * 1000;

const ROLE_LABELS: Partial<Record<ServiceRole, string>> = {
  [ServiceRole.SERVICE_ROLE_COLLECTOR]: 'collector',
  [ServiceRole.SERVICE_ROLE_TRANSLATOR]: 'translator',
  [ServiceRole.SERVICE_ROLE_COMMITTER]: 'committer',
};

/** `offsetsync_link_state{source,target,state}`: 1 for each link's current state, 0 for the others. */
export function linkStateSamples(links: readonly LinkStatus[]): GaugeSample[] {
  return links.flatMap((link) =>
    LINK_STATES.map((state) => ({
      value: link.state === state ? 1 : 0,
      attributes: { source: link.sourceCluster, target: link.targetCluster, state: linkStateName(state) },
    })),
  );
}

/**
 * `offsetsync_link_end_to_end_lag_seconds{source,target}`: source commit to target commit of each link's
 * most recently applied commit; no sample for a link that has applied nothing yet.
 */
export function linkLagSamples(links: readonly LinkStatus[]): GaugeSample[] {
  return links.flatMap((link) =>
    link.endToEndLagMs < 0
      ? []
      : [
          {
            value: link.endToEndLagMs / 1000,
            attributes: { source: link.sourceCluster, target: link.targetCluster },
          },
        ],
  );
}

/**
 * `offsetsync_link_oldest_pending_translation_seconds{source,target}`: how long the oldest source commit
 * whose translation is pending (its record has not arrived on the target) has waited, since the
 * collector saw it; 0 when none is pending, so every link has a series.
 */
export function pendingTranslationSamples(
  links: readonly LinkRef[],
  oldestSinceMs: (link: LinkRef) => number | undefined,
  nowMs: number,
): GaugeSample[] {
  return links.map((link) => {
    const since = oldestSinceMs(link);
    return {
      value: since === undefined ? 0 : Math.max(0, nowMs - since) / 1000,
      attributes: { source: link.source, target: link.target },
    };
  });
}

/** The clusters an instance works for, as one key: a replacement works for the same. */
function clustersKey(instance: InstanceSighting): string {
  return `${instance.targetCluster}\u0000${[...instance.sourceClusters].sort().join('\u0000')}`;
}

/**
 * `offsetsync_instance_up{role,kafka_cluster,instance_id}` (1 while its heartbeats arrive, 0 once
 * `missingAfterHeartbeats` intervals passed without one) and
 * `offsetsync_instance_heartbeat_age_seconds{...}` (seconds since its latest heartbeat was sent).
 *
 * `kafka_cluster` is the cluster the instance acts on: a collector's source, a translator's or
 * committer's target. An instance that stopped is left out once another instance of its role runs for
 * the same clusters (a replaced pod is not missing), and after a day.
 */
export function instanceSamples(
  instances: readonly InstanceSighting[],
  thresholds: LinkThresholds,
  nowMs: number,
  hearing: Hearing = HEARD_THROUGHOUT,
): { up: GaugeSample[]; heartbeatAge: GaugeSample[] } {
  const alive = instances.filter((i) => isAlive(i, nowMs, thresholds, hearing));
  const running = new Set(alive.map((i) => `${i.role}\u0000${clustersKey(i)}`));
  const up: GaugeSample[] = [];
  const heartbeatAge: GaugeSample[] = [];
  for (const instance of instances) {
    const role = ROLE_LABELS[instance.role];
    if (role === undefined) continue;
    const ageMs = Math.max(0, nowMs - instance.lastHeartbeatMs);
    const isUp = alive.includes(instance);
    if (
      !isUp &&
      (ageMs > FORGET_INSTANCE_AFTER_MS || running.has(`${instance.role}\u0000${clustersKey(instance)}`))
    )
      continue;
    const attributes = {
      role,
      kafka_cluster:
        instance.role === ServiceRole.SERVICE_ROLE_COLLECTOR
          ? [...instance.sourceClusters].sort().join(',')
          : instance.targetCluster,
      instance_id: instance.instanceId,
    };
    up.push({ value: isUp ? 1 : 0, attributes });
    heartbeatAge.push({ value: ageMs / 1000, attributes });
  }
  return { up, heartbeatAge };
}

/** What the gauges are read from, at collection time. */
export interface HealthMetricsSource {
  /** The published links; empty until the streams were replayed (nothing is known before). */
  links(): readonly LinkStatus[];
  /** Whether the streams were replayed: before, instances and pending translations are not reported. */
  ready(): boolean;
  instances(): readonly InstanceSighting[];
  /** When health could hear the heartbeats (see {@link Hearing}). */
  hearing(): Hearing;
  knownLinks(): readonly LinkRef[];
  oldestPendingTranslationSinceMs(link: LinkRef): number | undefined;
  thresholds: LinkThresholds;
  clock(): number;
}

/** Registers health's gauges on `meter`; all are read in one batch callback. */
export function registerHealthMetrics(meter: Meter, source: HealthMetricsSource): void {
  const gauges = {
    linkState: meter.createObservableGauge('offsetsync_link_state', {
      description: 'State of each link: 1 for its current state, 0 for the others.',
    }),
    linkLag: meter.createObservableGauge('offsetsync_link_end_to_end_lag_seconds', {
      description: 'Source commit to target commit of the most recently applied commit of each link.',
    }),
    pending: meter.createObservableGauge('offsetsync_link_oldest_pending_translation_seconds', {
      description:
        'Age of the oldest source commit of each link whose translation waits for its record on the target; 0 when none.',
    }),
    up: meter.createObservableGauge('offsetsync_instance_up', {
      description:
        'Each instance heard from: 1 while its heartbeats arrive, 0 once they stopped and no other instance replaced it.',
    }),
    heartbeatAge: meter.createObservableGauge('offsetsync_instance_heartbeat_age_seconds', {
      description: 'Seconds since the latest heartbeat of each instance was sent.',
    }),
  };
  meter.addBatchObservableCallback((result) => {
    const links = source.links();
    const observe = (gauge: ObservableGauge, samples: GaugeSample[]) => {
      for (const sample of samples) result.observe(gauge, sample.value, sample.attributes);
    };
    observe(gauges.linkState, linkStateSamples(links));
    observe(gauges.linkLag, linkLagSamples(links));
    if (!source.ready()) return;
    const nowMs = source.clock();
    observe(
      gauges.pending,
      pendingTranslationSamples(source.knownLinks(), (l) => source.oldestPendingTranslationSinceMs(l), nowMs),
    );
    const { up, heartbeatAge } = instanceSamples(
      source.instances(),
      source.thresholds,
      nowMs,
      source.hearing(),
    );
    observe(gauges.up, up);
    observe(gauges.heartbeatAge, heartbeatAge);
  }, Object.values(gauges));
}
