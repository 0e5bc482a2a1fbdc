// The sandbox fans out to two targets, as a migration to two places would: `target`, where MirrorMaker 2
// keeps the topic names, and `cloud`, where a second MirrorMaker 2 names the copy the way MirrorMaker does
// by default (`source.<topic>`). Each target holds a different number of records of its own before the
// copy, so the same record sits at three different offsets on the three clusters and only a translation,
// never a copy of the source offset, puts the group on the right record everywhere.

/** The sandbox's source cluster: its alias in the test bed, in offsetsync's links and in MirrorMaker. */
export const SANDBOX_SOURCE = 'source';

/** One target of the sandbox and how its copy of the demo topic comes about. */
export interface SandboxTarget {
  /** Its alias in the test bed, in offsetsync's config and in MirrorMaker's properties. */
  cluster: string;
  /**
   * How its MirrorMaker names the copy: `identity` keeps the name, `default` is MirrorMaker's
   * DefaultReplicationPolicy (`<source alias>.<topic>`).
   */
  replicationPolicy: 'identity' | 'default';
  /** Records of its own on partition 0 before the copy. */
  ownRecordsBase: number;
  /** How many more of its own each further partition holds. */
  ownRecordsStep: number;
}

/** The two targets, in the order the group moves to them. */
export const SANDBOX_TARGETS: readonly SandboxTarget[] = [
  { cluster: 'target', replicationPolicy: 'identity', ownRecordsBase: 100, ownRecordsStep: 37 },
  { cluster: 'cloud', replicationPolicy: 'default', ownRecordsBase: 250, ownRecordsStep: 61 },
];

/** Every Kafka cluster the sandbox's test bed starts: the source first, then the targets. */
export function sandboxClusters(targets: readonly SandboxTarget[] = SANDBOX_TARGETS): string[] {
  return [SANDBOX_SOURCE, ...targets.map((t) => t.cluster)];
}

/** The name of `topic`'s copy on `target`, as its MirrorMaker names it. Pure. */
export function copyTopicName(target: SandboxTarget, topic: string): string {
  // The sandbox starts MirrorMaker with the source's alias SANDBOX_SOURCE and its default separator `.`.
  return target.replicationPolicy === 'identity' ? topic : `${SANDBOX_SOURCE}.${topic}`;
}

/** How many records of its own `partition` of `target`'s copy holds before MirrorMaker copies. Pure. */
export function ownRecordCount(target: SandboxTarget, partition: number): number {
  return target.ownRecordsBase + target.ownRecordsStep * partition;
}

/**
 * offsetsync's link to `target` (config `links[]`): its topic names must say what its MirrorMaker does,
 * else the translator looks for the records under a name the target does not have. Pure.
 */
export function sandboxLink(target: SandboxTarget): {
  source: string;
  target: string;
  topicNames?: { policy: 'mirrormaker2' };
} {
  return {
    source: SANDBOX_SOURCE,
    target: target.cluster,
    // The link's sourceAlias defaults to its source, which is MirrorMaker's alias of it too.
    ...(target.replicationPolicy === 'default' ? { topicNames: { policy: 'mirrormaker2' as const } } : {}),
  };
}
