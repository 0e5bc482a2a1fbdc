// What `offsetsync status` prints: the health API's answers as plain JSON rows for scripts, or as
// aligned tables for people. Pure.
import {
  LinkState,
  PartitionSyncState,
  ServiceRole,
  type GroupStatus,
  type LinkStatus,
} from '@offsetsync/contracts';
import type { PlanRow } from '../cutover/cutover-plan.js';

/** One link, as `--json` prints it. */
export interface LinkRow {
  source: string;
  target: string;
  state: string;
  reason: string;
  endToEndLagMs: number;
  pending: number;
  lastSourceCommitMs: number;
  lastAppliedMs: number;
  changedAtMs: number;
  /** A committer of the link only observes it: nothing is committed on the target. */
  observing: boolean;
  instances: { role: string; instanceId: string; lastHeartbeatMs: number; softwareVersion: string }[];
}

/** One partition of one group on one link, as `--json` prints it. */
export interface GroupRow {
  source: string;
  target: string;
  group: string;
  topic: string;
  /** The topic's name on the target (the same as `topic` unless the link renames it). */
  targetTopic: string;
  partition: number;
  sourceOffset: number;
  targetOffset: number;
  exact: boolean;
  lagMs: number;
  replayIfMoved: number;
  /** Records a consumer moving now would pass over; 0 by design, -1 when unknown (or health does not say). */
  skipIfMoved: number;
  /** On a link that observes: the offset offsetsync would commit; -1 otherwise. */
  wouldCommitOffset: number;
  state: string;
  reason: string;
}

export interface StatusReport {
  overallState: string;
  links: LinkRow[];
  groups: GroupRow[];
}

/** LINK_STATE_SOURCE_ONLY -> SOURCE_ONLY. */
export function linkStateName(state: LinkState): string {
  return (LinkState[state] ?? 'UNRECOGNIZED').replace(/^LINK_STATE_/, '');
}

/** PARTITION_SYNC_STATE_SKIPPED_ACTIVE_ON_TARGET -> SKIPPED_ACTIVE_ON_TARGET. */
export function partitionStateName(state: PartitionSyncState): string {
  return (PartitionSyncState[state] ?? 'UNRECOGNIZED').replace(/^PARTITION_SYNC_STATE_/, '');
}

/** The --state option's value (case-insensitive, with or without prefix) as an enum value. */
export function parsePartitionState(text: string): PartitionSyncState | undefined {
  const name = `PARTITION_SYNC_STATE_${text
    .toUpperCase()
    .replace(/^PARTITION_SYNC_STATE_/, '')
    .replaceAll('-', '_')}`;
  const value = (PartitionSyncState as unknown as Record<string, unknown>)[name];
  return typeof value === 'number' && value > 0 ? value : undefined;
}

function roleName(role: ServiceRole): string {
  return (ServiceRole[role] ?? 'UNRECOGNIZED').replace(/^SERVICE_ROLE_/, '').toLowerCase();
}

export function linkRow(link: LinkStatus): LinkRow {
  return {
    source: link.sourceCluster,
    target: link.targetCluster,
    state: linkStateName(link.state),
    reason: link.reason,
    endToEndLagMs: link.endToEndLagMs,
    pending: link.pending,
    lastSourceCommitMs: link.lastSourceCommitMs,
    lastAppliedMs: link.lastAppliedMs,
    changedAtMs: link.changedAtMs,
    observing: link.observing,
    instances: link.instances.map((i) => ({
      role: roleName(i.role),
      instanceId: i.instanceId,
      lastHeartbeatMs: i.lastHeartbeatMs,
      softwareVersion: i.softwareVersion,
    })),
  };
}

export function groupRows(group: GroupStatus): GroupRow[] {
  return group.partitions.map((p) => ({
    source: group.sourceCluster,
    target: group.targetCluster,
    group: group.group,
    topic: p.topic,
    // Health before topic names leaves it empty: the same name.
    targetTopic: p.targetTopic === '' ? p.topic : p.targetTopic,
    partition: p.partition,
    sourceOffset: p.sourceOffset,
    targetOffset: p.targetOffset,
    exact: p.exact,
    lagMs: p.lagMs,
    replayIfMoved: p.replayIfMoved,
    skipIfMoved: p.skipIfMoved ?? -1,
    wouldCommitOffset: p.wouldCommitOffset ?? -1,
    state: partitionStateName(p.state),
    reason: p.reason,
  }));
}

/** Left-aligned columns separated by two spaces; the header row first. */
function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

const orDash = (n: number, unit = '') => (n < 0 ? '-' : `${n}${unit}`);

/** The report as tables for people. */
export function formatReport(report: StatusReport): string {
  const out: string[] = [];
  out.push(`Overall: ${report.overallState}`, '');
  if (report.links.length === 0) out.push('No links known.');
  else
    out.push(
      table(
        ['LINK', 'STATE', 'LAG', 'PENDING', 'INSTANCES', 'REASON'],
        report.links.map((l) => [
          `${l.source} -> ${l.target}`,
          l.state,
          orDash(l.endToEndLagMs, ' ms'),
          String(l.pending),
          l.instances.map((i) => `${i.role}:${i.instanceId}`).join(',') || '-',
          l.reason,
        ]),
      ),
    );
  if (report.groups.length > 0) {
    out.push(
      '',
      table(
        [
          'LINK',
          'GROUP',
          'TOPIC/PARTITION',
          'SOURCE',
          'TARGET',
          'EXACT',
          'LAG',
          'REPLAY',
          'SKIP',
          'STATE',
          'REASON',
        ],
        report.groups.map((g) => [
          `${g.source} -> ${g.target}`,
          g.group,
          g.targetTopic === g.topic
            ? `${g.topic}/${g.partition}`
            : `${g.topic} -> ${g.targetTopic}/${g.partition}`,
          String(g.sourceOffset),
          // A link that observes committed nothing: what it would commit, marked as such.
          g.wouldCommitOffset >= 0 ? `(${g.wouldCommitOffset})` : orDash(g.targetOffset),
          g.exact ? 'yes' : 'no',
          orDash(g.lagMs, ' ms'),
          orDash(g.replayIfMoved),
          orDash(g.skipIfMoved),
          g.state,
          g.reason,
        ]),
      ),
    );
  }
  return `${out.join('\n')}\n`;
}

/**
 * The plan of `cutover --dry-run` as a table: per partition the source offset, the target's (in
 * parentheses: what a link that observes would commit), and the records a move now would replay or skip.
 */
export function formatPlan(rows: readonly PlanRow[]): string {
  return table(
    ['TOPIC/PARTITION', 'SOURCE', 'TARGET', 'REPLAY', 'SKIP', 'STATE', 'REASON'],
    rows.map((r) => [
      r.targetTopic === r.topic
        ? `${r.topic}/${r.partition}`
        : `${r.topic} -> ${r.targetTopic}/${r.partition}`,
      String(r.sourceOffset),
      r.wouldCommitOffset >= 0 ? `(${r.wouldCommitOffset})` : orDash(r.targetOffset),
      orDash(r.replayIfMoved),
      orDash(r.skipIfMoved),
      partitionStateName(r.state),
      r.reason,
    ]),
  );
}
