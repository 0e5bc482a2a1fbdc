// Which groups and topics go along one link (config `links[].groups` and `links[].topics`), of those the
// collector passes on: a group that must never reach one target (the cloud) still goes to the others.
// Compiled once per link; pure afterwards. What excludes a commit is named, for health, status and
// cutover to say which filter kept it off the link.
import { compileFilterPattern } from './filter-pattern.js';
import type { OffsetSyncConfig } from './schema.js';

type LinkConfig = OffsetSyncConfig['links'][number];

/** Why a group (and topic) does not go along a link, or undefined when it does. */
export type LinkExclusion = string | undefined;

/** The filter of one link: `group` for a group as a whole, `commit` for one of its topics. */
export interface LinkFilter {
  group(group: string): LinkExclusion;
  commit(group: string, topic: string): LinkExclusion;
}

interface Compiled {
  include: Array<{ source: string; re: RegExp }>;
  exclude: Array<{ source: string; re: RegExp }>;
}

function compile(filter: { include: string[]; exclude: string[] } | undefined): Compiled | undefined {
  if (filter === undefined) return undefined;
  const each = (sources: string[]) => sources.map((source) => ({ source, re: compileFilterPattern(source) }));
  return { include: each(filter.include), exclude: each(filter.exclude) };
}

function excludedBy(compiled: Compiled | undefined, what: string, value: string): LinkExclusion {
  if (compiled === undefined) return undefined;
  const excluding = compiled.exclude.find(({ re }) => re.test(value));
  if (excluding !== undefined) return `the link's ${what} exclude ${JSON.stringify(excluding.source)}`;
  if (!compiled.include.some(({ re }) => re.test(value)))
    return `the link's ${what} include (${compiled.include.map((i) => JSON.stringify(i.source)).join(', ') || 'none'}), which ${value} does not match`;
  return undefined;
}

/** Compiles the filter of `link`. Its patterns were checked at load, so this does not throw. */
export function linkFilter(link: Pick<LinkConfig, 'groups' | 'topics'>): LinkFilter {
  const groups = compile(link.groups);
  const topics = compile(link.topics);
  return {
    group: (group) => excludedBy(groups, 'groups', group),
    commit: (group, topic) => excludedBy(groups, 'groups', group) ?? excludedBy(topics, 'topics', topic),
  };
}
