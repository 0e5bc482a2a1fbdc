// Everything health knows, folded from the JetStream streams: the latest heartbeat of every instance and
// the latest facts of every group partition, per source and per link. The streams keep the last event per
// subject, so reading them again after a restart rebuilds the same state. No I/O here.
import {
  ApplyOutcome,
  GroupStatus,
  InstanceInfo,
  LinkStatus,
  PartitionSyncState,
  ServiceRole,
  type Problem,
  type Version,
} from '@offsetsync/contracts';
import { linkFilter, type LinkFilter } from '@offsetsync/runtime';
import {
  correlateLink,
  HEARD_THROUGHOUT,
  type Hearing,
  type InstanceSighting,
  type LinkThresholds,
  type LinkVerdict,
} from './link-correlation.js';
import { comparePositions, type PagePosition } from './page-token.js';
import {
  compareVersions,
  derivePartition,
  withApplied,
  withCommitted,
  withDeleted,
  withTranslated,
  type AppliedFact,
  type CommittedFact,
  type DeletedFact,
  type LinkPartitionFacts,
  type SourcePartitionFacts,
  type TranslatedFact,
} from './partition-status.js';

export interface LinkRef {
  source: string;
  target: string;
}

/** An instance as health keeps it. */
export interface InstanceRecord extends InstanceSighting {
  softwareVersion: string;
  problems: Problem[];
}

/** One event of the streams, decoded and reduced to what health needs. */
export type HealthEvent =
  | { kind: 'heartbeat'; instance: InstanceRecord }
  | {
      kind: 'committed';
      source: string;
      group: string;
      topic: string;
      partition: number;
      fact: CommittedFact;
    }
  | {
      kind: 'deleted';
      source: string;
      group: string;
      /** Undefined when the whole group was deleted. */
      partition?: { topic: string; partition: number };
      fact: DeletedFact;
    }
  | {
      kind: 'translated';
      link: LinkRef;
      group: string;
      topic: string;
      partition: number;
      fact: TranslatedFact;
    }
  | { kind: 'applied'; link: LinkRef; group: string; topic: string; partition: number; fact: AppliedFact };

interface SourceGroup {
  deleted?: DeletedFact;
  partitions: Map<string, SourcePartitionFacts>;
  updatedAtMs: number;
}

interface LinkGroup {
  partitions: Map<string, LinkPartitionFacts>;
  updatedAtMs: number;
}

interface LinkRecord extends LinkRef {
  /** Which groups and topics go along the link (its config); a link learnt from events takes all. */
  filter: LinkFilter;
  /** In health's config: reported whatever runs. A learnt link is reported while its instances run. */
  configured: boolean;
  groups: Map<string, LinkGroup>;
  /** Partitions whose latest source commit waits on this link: key -> observedAtMs. */
  waiting: Map<string, number>;
  /** The subset of `waiting` whose translation is pending (the record has not arrived on the target). */
  pendingTranslations: Map<string, number>;
  lastApplied?: { appliedAtMs: number; lagMs: number };
}

/** The filter of a link learnt from events or heartbeats rather than configured: everything goes along. */
const EVERYTHING = linkFilter({});

const tpKey = (topic: string, partition: number) => `${topic}\u0000${partition}`;
const splitTpKey = (key: string) => {
  const cut = key.lastIndexOf('\u0000');
  return { topic: key.slice(0, cut), partition: Number(key.slice(cut + 1)) };
};
const linkKey = (l: LinkRef) => `${l.source}\u0000${l.target}`;

/** A configured link: its ends and its filters. */
export type ConfiguredLink = LinkRef & Parameters<typeof linkFilter>[0];

/** Filters of a group listing; empty strings and 0 mean "any". */
export interface GroupFilters {
  sourceCluster: string;
  targetCluster: string;
  groupPrefix: string;
  state: PartitionSyncState;
}

/**
 * Health's state: folds events in ({@link HealthState.apply}, one step per kind of event) and answers the
 * API's questions about links and groups.
 */
export class HealthState {
  private readonly instances = new Map<string, InstanceRecord>();
  private readonly sources = new Map<string, Map<string, SourceGroup>>();
  private readonly lastSourceCommitMs = new Map<string, number>();
  private readonly links = new Map<string, LinkRecord>();
  private readonly forgetDeletedAfterMs: number;
  /** When health could hear the heartbeats; see {@link Hearing}. */
  private hearingState: Hearing = HEARD_THROUGHOUT;
  /** Counts the groups added anywhere: a link's sorted names are sorted again when it changed. */
  private groupNamesVersion = 0;
  private readonly sortedNames = new Map<string, { version: number; names: string[] }>();

  private readonly forgetLinkAfterMs: number;

  /**
   * `thresholds.forgetLinkAfterMs`: how long a link not in the config (learnt from heartbeats and
   * events) is still reported after the last heartbeat of a translator or committer serving it.
   */
  constructor(
    configuredLinks: readonly ConfiguredLink[],
    private readonly thresholds: LinkThresholds & {
      forgetLinkAfterMs: number;
      forgetDeletedGroupAfterMs?: number;
    },
    private readonly clock: () => number = Date.now,
  ) {
    this.forgetLinkAfterMs = thresholds.forgetLinkAfterMs;
    this.forgetDeletedAfterMs = thresholds.forgetDeletedGroupAfterMs ?? 3_600_000;
    this.configure(configuredLinks);
  }

  /**
   * Takes the links of a (re)loaded config: these are reported whatever runs, with their filters; a link
   * no longer among them is from now on reported only while its instances run (see {@link knownLinks}).
   * What health knows of the link's groups stays, should it come back.
   */
  configure(links: readonly ConfiguredLink[]): void {
    const wanted = new Map(links.map((link) => [linkKey(link), link]));
    for (const [key, record] of this.links) {
      const link = wanted.get(key);
      record.configured = link !== undefined;
      record.filter = link === undefined ? EVERYTHING : linkFilter(link);
      // What waits on the link depends on its filter.
      this.refreshLink(record);
    }
    for (const link of links) this.link(link, link);
  }

  /** Folds one event in: the step of its kind. */
  apply(event: HealthEvent): void {
    switch (event.kind) {
      case 'heartbeat':
        return this.applyHeartbeat(event.instance);
      case 'committed':
        return this.applyCommitted(event);
      case 'deleted':
        return this.applyDeleted(event);
      case 'translated':
      case 'applied':
        return this.applyTargetSide(event);
    }
  }

  /** An instance's latest heartbeat; a translator or committer names its links, a collector only its source. */
  private applyHeartbeat(i: InstanceRecord): void {
    if (i.role === ServiceRole.SERVICE_ROLE_HEALTH) return;
    const id = `${i.role}\u0000${i.instanceId}`;
    const previous = this.instances.get(id);
    if (previous !== undefined && previous.lastHeartbeatMs > i.lastHeartbeatMs) return;
    this.instances.set(id, i);
    if (i.targetCluster !== '')
      for (const source of i.sourceClusters) this.link({ source, target: i.targetCluster });
  }

  /** A source commit: shared by every link from that source. */
  private applyCommitted(event: Extract<HealthEvent, { kind: 'committed' }>): void {
    const group = this.sourceGroup(event.source, event.group, event.fact.observedAtMs);
    const key = tpKey(event.topic, event.partition);
    group.partitions.set(key, withCommitted(group.partitions.get(key) ?? {}, event.fact));
    this.lastSourceCommitMs.set(
      event.source,
      Math.max(this.lastSourceCommitMs.get(event.source) ?? 0, event.fact.commitTimestampMs),
    );
    this.refreshSourcePartitions(event.source, event.group, [key]);
  }

  /** Offsets removed on the source, of one partition or of the whole group. */
  private applyDeleted(event: Extract<HealthEvent, { kind: 'deleted' }>): void {
    const group = this.sourceGroup(event.source, event.group, event.fact.observedAtMs);
    if (event.partition === undefined) {
      if (group.deleted === undefined || compareVersions(event.fact.version, group.deleted.version) >= 0)
        group.deleted = event.fact;
      this.refreshSourcePartitions(event.source, event.group, [...group.partitions.keys()]);
    } else {
      const key = tpKey(event.partition.topic, event.partition.partition);
      group.partitions.set(key, withDeleted(group.partitions.get(key) ?? {}, event.fact));
      this.refreshSourcePartitions(event.source, event.group, [key]);
    }
  }

  /** A translation or a committer's decision: one link's side of a partition. */
  private applyTargetSide(event: Extract<HealthEvent, { kind: 'translated' | 'applied' }>): void {
    const link = this.link(event.link);
    let group = link.groups.get(event.group);
    if (group === undefined) {
      group = { partitions: new Map(), updatedAtMs: 0 };
      link.groups.set(event.group, group);
      this.groupNamesVersion += 1;
    }
    const key = tpKey(event.topic, event.partition);
    const facts = group.partitions.get(key) ?? {};
    if (event.kind === 'translated') {
      group.partitions.set(key, withTranslated(facts, event.fact));
      group.updatedAtMs = Math.max(group.updatedAtMs, event.fact.sourceCommitTimestampMs);
    } else {
      group.partitions.set(key, withApplied(facts, event.fact));
      group.updatedAtMs = Math.max(group.updatedAtMs, event.fact.appliedAtMs);
      if (
        event.fact.outcome === ApplyOutcome.APPLY_OUTCOME_APPLIED &&
        event.fact.appliedAtMs >= (link.lastApplied?.appliedAtMs ?? 0)
      ) {
        link.lastApplied = {
          appliedAtMs: event.fact.appliedAtMs,
          lagMs: Math.max(0, event.fact.appliedAtMs - event.fact.sourceCommitTimestampMs),
        };
      }
    }
    this.refresh(link, event.group, key);
  }

  /**
   * Every link reported at `nowMs`, by source then target: each configured link, and each other link
   * (named by a heartbeat or an event) while a translator or committer serving it was heard within
   * `forgetLinkAfterMs`. A link removed from the config thus disappears once its instances are gone.
   */
  knownLinks(nowMs: number = this.clock()): LinkRef[] {
    return [...this.links.values()]
      .filter((link) => link.configured || this.servedSince(link, nowMs - this.forgetLinkAfterMs))
      .map(({ source, target }) => ({ source, target }))
      .sort((a, b) => comparePositions({ ...a, group: '' }, { ...b, group: '' }));
  }

  /** When health could hear the services' heartbeats. */
  hearing(): Hearing {
    return this.hearingState;
  }

  /** Health no longer hears the heartbeats (its NATS connection, or its read of them, is down). */
  lostHearing(atMs: number): void {
    if (this.hearingState.lostAtMs === undefined)
      this.hearingState = { ...this.hearingState, lostAtMs: atMs };
  }

  /** Health hears the heartbeats again: a service's silence counts from now on. */
  regainedHearing(atMs: number): void {
    if (this.hearingState.lostAtMs !== undefined) this.hearingState = { sinceMs: atMs };
  }

  /** The verdict and status of every known link at `nowMs`. */
  linkStatuses(nowMs: number): { link: LinkRef; verdict: LinkVerdict; status: LinkStatus }[] {
    const instances = [...this.instances.values()];
    return this.knownLinks(nowMs).map((ref) => {
      const link = this.link(ref);
      let oldest: number | undefined;
      for (const since of link.waiting.values())
        oldest = oldest === undefined ? since : Math.min(oldest, since);
      const verdict = correlateLink(
        ref,
        instances,
        {
          oldestWaitingSinceMs: oldest,
          waitingPartitions: link.waiting.size,
          lastEndToEndLagMs: link.lastApplied?.lagMs,
        },
        this.thresholds,
        nowMs,
        this.hearingState,
      );
      const alive = verdict.alive as InstanceRecord[];
      const status = LinkStatus.fromPartial({
        sourceCluster: ref.source,
        targetCluster: ref.target,
        state: verdict.state,
        reason: verdict.reason,
        observing: verdict.observing,
        instances: alive.map((i) =>
          InstanceInfo.fromPartial({
            role: i.role,
            instanceId: i.instanceId,
            lastHeartbeatMs: i.lastHeartbeatMs,
            softwareVersion: i.softwareVersion,
            problems: i.problems,
          }),
        ),
        endToEndLagMs: link.lastApplied?.lagMs ?? -1,
        pending: alive
          .filter((i) => i.role !== ServiceRole.SERVICE_ROLE_COLLECTOR)
          .reduce((sum, i) => sum + i.pending, 0),
        lastSourceCommitMs: this.lastSourceCommitMs.get(ref.source) ?? 0,
        lastAppliedMs: link.lastApplied?.appliedAtMs ?? 0,
      });
      return { link: ref, verdict, status };
    });
  }

  /** Every instance heard from (health itself aside), as its latest heartbeat describes it. */
  instanceRecords(): InstanceRecord[] {
    return [...this.instances.values()];
  }

  /**
   * Since when (observedAtMs of its source commit) the oldest pending translation of a link waits for
   * its record on the target; undefined when none is pending.
   */
  oldestPendingTranslationSinceMs(ref: LinkRef): number | undefined {
    let oldest: number | undefined;
    for (const since of this.links.get(linkKey(ref))?.pendingTranslations.values() ?? [])
      oldest = oldest === undefined ? since : Math.min(oldest, since);
    return oldest;
  }

  /** The status of one group on one link, or undefined when the group was never seen there. */
  groupStatus(ref: LinkRef, group: string): GroupStatus | undefined {
    const sourceGroup = this.sources.get(ref.source)?.get(group);
    const link = this.links.get(linkKey(ref));
    const linkGroup = link?.groups.get(group);
    if (sourceGroup === undefined && linkGroup === undefined) return undefined;
    const keys = new Set([
      ...(sourceGroup?.partitions.keys() ?? []),
      ...(linkGroup?.partitions.keys() ?? []),
    ]);
    const partitions = [...keys]
      .map(splitTpKey)
      .sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition))
      .map(
        (tp) =>
          derivePartition(
            tp,
            sourceGroup?.partitions.get(tpKey(tp.topic, tp.partition)) ?? {},
            sourceGroup?.deleted,
            linkGroup?.partitions.get(tpKey(tp.topic, tp.partition)) ?? {},
            link?.filter.commit(group, tp.topic),
          ).status,
      );
    return GroupStatus.fromPartial({
      sourceCluster: ref.source,
      targetCluster: ref.target,
      group,
      partitions,
      updatedAtMs: Math.max(sourceGroup?.updatedAtMs ?? 0, linkGroup?.updatedAtMs ?? 0),
    });
  }

  /** Groups matching the filters after `after`, in listing order, at most `limit` (+1 to tell if more exist). */
  listGroups(filters: GroupFilters, after: PagePosition | undefined, limit: number): GroupStatus[] {
    const result: GroupStatus[] = [];
    for (const ref of this.knownLinks()) {
      if (filters.sourceCluster !== '' && ref.source !== filters.sourceCluster) continue;
      if (filters.targetCluster !== '' && ref.target !== filters.targetCluster) continue;
      const names = this.sortedGroupNames(ref);
      // Binary search to the first group after the page token and at or after the prefix: a page costs
      // its own groups, not a walk over every group before it.
      const from = firstIndex(
        names,
        (group) =>
          group >= filters.groupPrefix &&
          (after === undefined || comparePositions({ ...ref, group }, after) > 0),
      );
      for (let i = from; i < names.length; i++) {
        const group = names[i]!;
        // Sorted: past the prefix's range, no later name has it.
        if (!group.startsWith(filters.groupPrefix)) break;
        const status = this.groupStatus(ref, group);
        if (status === undefined) continue;
        if (
          filters.state !== PartitionSyncState.PARTITION_SYNC_STATE_UNSPECIFIED &&
          !status.partitions.some((p) => p.state === filters.state)
        )
          continue;
        result.push(status);
        if (result.length >= limit) return result;
      }
    }
    return result;
  }

  /**
   * The names of every group known on `ref` (from its source or from the link), sorted; sorted again only
   * after a group was added, not on every call (ListGroups pages through them).
   */
  private sortedGroupNames(ref: LinkRef): readonly string[] {
    const key = linkKey(ref);
    const cached = this.sortedNames.get(key);
    if (cached !== undefined && cached.version === this.groupNamesVersion) return cached.names;
    const names = [
      ...new Set([
        ...(this.sources.get(ref.source)?.keys() ?? []),
        ...(this.links.get(key)?.groups.keys() ?? []),
      ]),
    ].sort();
    this.sortedNames.set(key, { version: this.groupNamesVersion, names });
    return names;
  }

  /** Whether a translator or committer serving `link` sent a heartbeat at or after `sinceMs`. */
  private servedSince(link: LinkRef, sinceMs: number): boolean {
    for (const i of this.instances.values()) {
      if (i.role !== ServiceRole.SERVICE_ROLE_TRANSLATOR && i.role !== ServiceRole.SERVICE_ROLE_COMMITTER)
        continue;
      if (
        i.targetCluster === link.target &&
        i.sourceClusters.includes(link.source) &&
        i.lastHeartbeatMs >= sinceMs
      )
        return true;
    }
    return false;
  }

  /** The link's record, made when missing: configured with `config`'s filters, or learnt (everything goes). */
  private link(ref: LinkRef, config?: ConfiguredLink): LinkRecord {
    const key = linkKey(ref);
    let link = this.links.get(key);
    if (link === undefined) {
      link = {
        source: ref.source,
        target: ref.target,
        filter: config === undefined ? EVERYTHING : linkFilter(config),
        configured: config !== undefined,
        groups: new Map(),
        waiting: new Map(),
        pendingTranslations: new Map(),
      };
      this.links.set(key, link);
      // A link learnt late still sees every commit already read from its source.
      this.refreshLink(link);
    }
    return link;
  }

  /**
   * Forgets what was deleted on the source more than `health.forgetDeletedGroupAfterMs` before `nowMs`
   * and not committed again since: a deleted group, a group's deleted partition, and what the links knew
   * of them; also a link's group that its source no longer knows and that was quiet for as long (a late
   * translation of a forgotten group). Health's memory then follows the groups that exist, not every
   * group that ever did. Returns how many groups it forgot.
   */
  forgetDeleted(nowMs: number): number {
    const before = nowMs - this.forgetDeletedAfterMs;
    const gone = (deleted: DeletedFact | undefined, committed: { version: Version } | undefined) =>
      deleted !== undefined &&
      deleted.observedAtMs < before &&
      compareVersions(committed?.version, deleted.version) <= 0;
    let forgotten = 0;
    for (const [source, groups] of this.sources) {
      for (const [name, group] of groups) {
        if (group.deleted !== undefined && group.deleted.observedAtMs < before) {
          // The whole group goes unless a partition committed after its deletion.
          let newestCommit: { version: Version } | undefined;
          for (const facts of group.partitions.values())
            if (compareVersions(facts.committed?.version, newestCommit?.version) > 0)
              newestCommit = facts.committed;
          if (gone(group.deleted, newestCommit)) {
            for (const link of this.links.values())
              if (link.source === source) this.dropLinkGroup(link, name);
            groups.delete(name);
            forgotten += 1;
            continue;
          }
        }
        for (const [key, facts] of group.partitions) {
          const deleted =
            compareVersions(facts.deleted?.version, group.deleted?.version) >= 0
              ? facts.deleted
              : group.deleted;
          if (gone(deleted, facts.committed)) this.dropPartition(source, name, key);
        }
      }
    }
    for (const link of this.links.values()) {
      for (const [name, group] of link.groups) {
        if (this.sources.get(link.source)?.has(name) === true || group.updatedAtMs >= before) continue;
        this.dropLinkGroup(link, name);
        forgotten += 1;
      }
    }
    if (forgotten > 0) this.groupNamesVersion += 1;
    return forgotten;
  }

  /** Forgets one partition of a source group, on the source and on every link from it. */
  private dropPartition(source: string, group: string, key: string): void {
    this.sources.get(source)?.get(group)?.partitions.delete(key);
    for (const link of this.links.values()) {
      if (link.source !== source) continue;
      link.groups.get(group)?.partitions.delete(key);
      link.waiting.delete(`${group}\u0001${key}`);
      link.pendingTranslations.delete(`${group}\u0001${key}`);
    }
  }

  /** Forgets everything a link knew of a group. */
  private dropLinkGroup(link: LinkRecord, group: string): void {
    const partitions = new Set([
      ...(link.groups.get(group)?.partitions.keys() ?? []),
      ...(this.sources.get(link.source)?.get(group)?.partitions.keys() ?? []),
    ]);
    link.groups.delete(group);
    for (const key of partitions) {
      link.waiting.delete(`${group}\u0001${key}`);
      link.pendingTranslations.delete(`${group}\u0001${key}`);
    }
  }

  /** Derives again every partition of the link's source. */
  private refreshLink(link: LinkRecord): void {
    for (const [group, sourceGroup] of this.sources.get(link.source) ?? []) {
      for (const tp of sourceGroup.partitions.keys()) this.refresh(link, group, tp);
    }
  }

  private sourceGroup(source: string, group: string, atMs: number): SourceGroup {
    let groups = this.sources.get(source);
    if (groups === undefined) {
      groups = new Map();
      this.sources.set(source, groups);
    }
    let record = groups.get(group);
    if (record === undefined) {
      record = { partitions: new Map(), updatedAtMs: 0 };
      groups.set(group, record);
      this.groupNamesVersion += 1;
    }
    record.updatedAtMs = Math.max(record.updatedAtMs, atMs);
    return record;
  }

  private refreshSourcePartitions(source: string, group: string, keys: string[]): void {
    for (const link of this.links.values()) {
      if (link.source !== source) continue;
      for (const key of keys) this.refresh(link, group, key);
    }
  }

  /** Recomputes whether one partition waits on one link. */
  private refresh(link: LinkRecord, group: string, key: string): void {
    const sourceGroup = this.sources.get(link.source)?.get(group);
    const tp = splitTpKey(key);
    const derived = derivePartition(
      tp,
      sourceGroup?.partitions.get(key) ?? {},
      sourceGroup?.deleted,
      link.groups.get(group)?.partitions.get(key) ?? {},
      link.filter.commit(group, tp.topic),
    );
    const waitingKey = `${group}\u0001${key}`;
    if (derived.waitingSinceMs === undefined) link.waiting.delete(waitingKey);
    else link.waiting.set(waitingKey, derived.waitingSinceMs);
    if (derived.waitingSinceMs === undefined || derived.waitingFor !== 'record')
      link.pendingTranslations.delete(waitingKey);
    else link.pendingTranslations.set(waitingKey, derived.waitingSinceMs);
  }
}

/** The first index of sorted `items` where `isAtOrPast` holds (it holds for every later one), or the length. Pure. */
function firstIndex<T>(items: readonly T[], isAtOrPast: (item: T) => boolean): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (isAtOrPast(items[mid]!)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
