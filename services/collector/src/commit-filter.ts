// Which commits the collector passes on. Compiled once from config; pure afterwards.
import { parseCommitMetadata } from '@offsetsync/contracts';
import { compileFilterPattern, type CollectorConfig } from '@offsetsync/runtime';
import type { VersionedRecord } from './commit-coalescer.js';
import type { DecodedRecord } from './offsets-topic-decoder.js';
import type { CollectorOutcome } from './outcome-counters.js';

/** Why a commit was not passed on; each is counted in heartbeats and metrics. */
export type FilterVerdict = 'pass' | 'own-group' | 'group-filtered' | 'topic-filtered' | 'offsetsync-commit';

export interface CommitFilter {
  /** Verdict for a group as a whole (group deletions). */
  group(group: string): FilterVerdict;
  /** Verdict for a commit (or offset deletion) of a group on a topic; `metadata` only for commits. */
  commit(group: string, topic: string, metadata?: string): FilterVerdict;
}

function compile(sources: readonly string[]): RegExp[] {
  return sources.map(compileFilterPattern);
}

function selected(value: string, include: readonly RegExp[], exclude: readonly RegExp[]): boolean {
  return include.some((re) => re.test(value)) && !exclude.some((re) => re.test(value));
}

/**
 * Builds the filter: a group or topic must match an include pattern and no exclude pattern; the
 * collector's own consumer group is always dropped; and so is every commit offsetsync itself wrote
 * (it carries the commit mark), so bidirectional links do not echo positions back and forth.
 */
export function createCommitFilter(
  config: Pick<CollectorConfig, 'groups' | 'topics' | 'consumerGroup'>,
): CommitFilter {
  const groupsInclude = compile(config.groups.include);
  const groupsExclude = compile(config.groups.exclude);
  const topicsInclude = compile(config.topics.include);
  const topicsExclude = compile(config.topics.exclude);
  const group = (name: string): FilterVerdict => {
    if (name === config.consumerGroup) return 'own-group';
    return selected(name, groupsInclude, groupsExclude) ? 'pass' : 'group-filtered';
  };
  return {
    group,
    commit(groupName, topic, metadata) {
      const verdict = group(groupName);
      if (verdict !== 'pass') return verdict;
      if (!selected(topic, topicsInclude, topicsExclude)) return 'topic-filtered';
      if (parseCommitMetadata(metadata) !== undefined) return 'offsetsync-commit';
      return 'pass';
    },
  };
}

const FILTER_OUTCOMES: Record<Exclude<FilterVerdict, 'pass'>, CollectorOutcome> = {
  'own-group': 'filtered_own_group',
  'group-filtered': 'filtered_group',
  'topic-filtered': 'filtered_topic',
  'offsetsync-commit': 'filtered_offsetsync_commit',
};

/**
 * Sorts decoded records into those passed on (commits, offset deletions and group deletions the filter
 * lets through), in order, and the outcome of every other one: why it was filtered, or that there is
 * nothing to do for it (group metadata, records of the newer coordinator types).
 */
export function filterRecords(
  decoded: readonly DecodedRecord[],
  filter: CommitFilter,
): { passed: VersionedRecord[]; dropped: CollectorOutcome[] } {
  const passed: VersionedRecord[] = [];
  const dropped: CollectorOutcome[] = [];
  for (const { record, version } of decoded) {
    let verdict: FilterVerdict;
    switch (record.kind) {
      case 'group-metadata':
        dropped.push('group_metadata');
        continue;
      case 'coordinator-record':
        dropped.push('coordinator_record');
        continue;
      case 'group-deleted':
        verdict = filter.group(record.group);
        break;
      case 'offset-commit':
        verdict = filter.commit(record.group, record.topic, record.metadata);
        break;
      case 'offset-deleted':
        verdict = filter.commit(record.group, record.topic);
        break;
    }
    if (verdict === 'pass') passed.push({ record, version });
    else dropped.push(FILTER_OUTCOMES[verdict]);
  }
  return { passed, dropped };
}
