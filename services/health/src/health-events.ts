// Reads one message of the four offsetsync streams into the event health folds: through the contracts'
// envelope (decodeEvent), then reduced to what health needs. Pure.
import {
  ApplyOutcome,
  decodeEvent,
  DeletionReason,
  type DecodeFailureReason,
  type DecodeOptions,
  type EventType,
  type Heartbeat,
  type OffsetApplied,
  type OffsetCommitted,
  type OffsetDeleted,
  type OffsetTranslated,
  type ReceivedMessage,
  type Version,
} from '@offsetsync/contracts';
import type { HealthEvent } from './health-state.js';

/** The streams health reads. */
export type HealthStream = 'heartbeats' | 'committed' | 'translated' | 'applied';

/** Every stream health reads, in the order it starts reading them. */
export const HEALTH_STREAMS: readonly HealthStream[] = ['heartbeats', 'committed', 'translated', 'applied'];

/**
 * The event types of each stream. A message without a type header is read as its stream's one type; the
 * committed stream carries two, so there a message without the header is not read.
 */
const STREAM_TYPES: Record<HealthStream, DecodeOptions<EventType>> = {
  heartbeats: { accept: ['Heartbeat'], typeWhenMissing: 'Heartbeat' },
  committed: { accept: ['OffsetCommitted', 'OffsetDeleted'] },
  translated: { accept: ['OffsetTranslated'], typeWhenMissing: 'OffsetTranslated' },
  applied: { accept: ['OffsetApplied'], typeWhenMissing: 'OffsetApplied' },
};

/** What one message is to health: an event it folds, or why not. */
export type HealthReading =
  | { ok: true; event: HealthEvent }
  | {
      ok: false;
      /** The envelope's reason, or NOT_USED for an event health has no use for. */
      reason: DecodeFailureReason | 'NOT_USED';
      type: string;
      detail: string;
    };

/** Reads one message of `stream`; never throws. */
export function readHealthEvent(stream: HealthStream, message: ReceivedMessage): HealthReading {
  const decoded = decodeEvent(message, STREAM_TYPES[stream]);
  if (!decoded.ok) return decoded;
  switch (decoded.type) {
    case 'Heartbeat':
      return { ok: true, event: fromHeartbeat(decoded.event) };
    case 'OffsetCommitted':
      return { ok: true, event: fromCommitted(decoded.event) };
    case 'OffsetDeleted':
      return { ok: true, event: fromDeleted(decoded.event) };
    case 'OffsetTranslated':
      return { ok: true, event: fromTranslated(decoded.event) };
    case 'OffsetApplied': {
      const event = fromApplied(decoded.event);
      if (event === undefined)
        return { ok: false, reason: 'NOT_USED', type: decoded.type, detail: 'no apply outcome' };
      return { ok: true, event };
    }
  }
}

/** An event without a version predates versions: older than every versioned one. */
function versionOf(version: Version | undefined): Version {
  return version ?? { offsetsPartition: -1, offsetsOffset: -1 };
}

const DELETION_WORDS: Record<number, string> = {
  [DeletionReason.DELETION_REASON_OFFSET_DELETED]: 'offsets deleted by an administrator',
  [DeletionReason.DELETION_REASON_GROUP_DELETED]: 'group deleted',
  [DeletionReason.DELETION_REASON_OFFSET_EXPIRED]: 'offsets expired',
};

function fromHeartbeat(b: Heartbeat): HealthEvent {
  return {
    kind: 'heartbeat',
    instance: {
      role: b.role,
      instanceId: b.instanceId,
      sourceClusters: b.sourceClusters,
      targetCluster: b.targetCluster,
      observedSourceClusters: b.observedSourceClusters,
      lastHeartbeatMs: b.sentAtMs,
      intervalMs: b.intervalMs,
      pending: b.progress?.pending ?? 0,
      softwareVersion: b.softwareVersion,
      problems: b.problems,
    },
  };
}

function fromCommitted(c: OffsetCommitted): HealthEvent {
  return {
    kind: 'committed',
    source: c.sourceCluster,
    group: c.group,
    topic: c.topic,
    partition: c.partition,
    fact: {
      version: versionOf(c.version),
      offset: c.committedOffset,
      commitTimestampMs: c.commitTimestampMs,
      observedAtMs: c.observedAtMs,
    },
  };
}

function fromDeleted(d: OffsetDeleted): HealthEvent {
  const fact = {
    version: versionOf(d.version),
    detail: DELETION_WORDS[d.reason] ?? 'offsets removed',
    observedAtMs: d.observedAtMs,
  };
  // A negative partition: the whole group was deleted.
  return d.partition < 0
    ? { kind: 'deleted', source: d.sourceCluster, group: d.group, fact }
    : {
        kind: 'deleted',
        source: d.sourceCluster,
        group: d.group,
        partition: { topic: d.topic, partition: d.partition },
        fact,
      };
}

function fromTranslated(t: OffsetTranslated): HealthEvent {
  return {
    kind: 'translated',
    link: { source: t.sourceCluster, target: t.targetCluster },
    group: t.group,
    topic: t.topic,
    partition: t.partition,
    fact: {
      version: versionOf(t.version),
      sourceOffset: t.sourceOffset,
      targetOffset: t.targetOffset,
      outcome: t.outcome,
      refusalReason: t.refusalReason,
      detail: t.detail,
      attempts: t.attempts,
      sourceCommitTimestampMs: t.sourceCommitTimestampMs,
      targetTopic: t.targetTopic,
    },
  };
}

/** Undefined for an OffsetApplied without an outcome: it says nothing about the partition. */
function fromApplied(a: OffsetApplied): HealthEvent | undefined {
  if (a.outcome === ApplyOutcome.APPLY_OUTCOME_UNSPECIFIED) return undefined;
  return {
    kind: 'applied',
    link: { source: a.sourceCluster, target: a.targetCluster },
    group: a.group,
    topic: a.topic,
    partition: a.partition,
    fact: {
      version: versionOf(a.version),
      sourceOffset: a.sourceOffset,
      targetOffset: a.targetOffset,
      exact: a.exact,
      outcome: a.outcome,
      skipReason: a.skipReason,
      detail: a.detail,
      sourceCommitTimestampMs: a.sourceCommitTimestampMs,
      appliedAtMs: a.appliedAtMs,
      targetTopic: a.targetTopic,
    },
  };
}
