// Where a source topic is on the target: the link's topic names (config `links[].topicNames`) say how its
// replicator names the copies. Identity keeps the name (MirrorMaker 2's IdentityReplicationPolicy, most
// other replicators); `mirrormaker2` is MirrorMaker 2's DefaultReplicationPolicy, which prefixes the
// source cluster's alias and a separator; `map` lists the replicated topics one by one, and a topic it does
// not list is not on the target at all: its commits are refused as not replicated, never guessed.
import type { TopicNames } from './schema.js';

/** MirrorMaker 2's default `replication.policy.separator`. */
const MIRROR_MAKER_SEPARATOR = '.';

/** The longest Kafka topic name. */
const MAX_TOPIC_LENGTH = 249;

/** Where a source topic is on the target. */
export type TargetTopic = { kind: 'replicated'; topic: string } | { kind: 'not-replicated'; detail: string };

/** The name of `topic` of the link from `source` on its target, by `names` (unset: identity). Pure. */
export function targetTopic(names: TopicNames | undefined, source: string, topic: string): TargetTopic {
  switch (names?.policy ?? 'identity') {
    case 'identity':
      return { kind: 'replicated', topic };
    case 'mirrormaker2': {
      const prefixed = `${names?.sourceAlias ?? source}${names?.separator ?? MIRROR_MAKER_SEPARATOR}${topic}`;
      if (prefixed.length > MAX_TOPIC_LENGTH)
        return {
          kind: 'not-replicated',
          detail: `topic ${topic} would be ${prefixed.length} characters long on the target (${prefixed.slice(0, 40)}...), longer than Kafka allows`,
        };
      return { kind: 'replicated', topic: prefixed };
    }
    case 'map': {
      const mapped =
        names?.map !== undefined && Object.hasOwn(names.map, topic) ? names.map[topic] : undefined;
      if (mapped === undefined)
        return { kind: 'not-replicated', detail: `the link's topic map does not list topic ${topic}` };
      return { kind: 'replicated', topic: mapped };
    }
  }
}
