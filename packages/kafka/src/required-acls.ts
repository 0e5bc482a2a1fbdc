// The Kafka ACLs each offsetsync role needs on each cluster, as data: docs/security.md prints them as
// kafka-acls.sh lines, `offsetsync security kafka-acls` prints them for a deployment, and the secured
// tests grant exactly these (and remove each in turn). Kafka's READ implies DESCRIBE, so reading a topic
// or a group is one ACL.

/** The roles that connect to Kafka with credentials of their own. */
export type KafkaRole = 'collector' | 'translator' | 'committer' | 'cli';

/** One ACL, on the source or the target cluster of a link. */
export interface RequiredAcl {
  /** Which side of a link the ACL is needed on. */
  cluster: 'source' | 'target';
  resourceType: 'TOPIC' | 'GROUP' | 'CLUSTER';
  /** The resource name; `*` is Kafka's wildcard (every topic, every group). */
  resourceName: string;
  patternType: 'LITERAL' | 'PREFIXED';
  operation: 'READ' | 'DESCRIBE';
  /** What the role does with it, for the documentation and the log line of a refusal. */
  why: string;
}

/** The names the ACLs depend on. */
export interface AclContext {
  /** The collector's consumer group (`collector.consumerGroup`, `offsetsync-collector-<source>` by default). */
  collectorGroup: string;
  /** The consumer group a `cutover` is about (`<group>` in the documentation). */
  cutoverGroup?: string;
}

/** The ACLs of `role`, both clusters. */
export function requiredKafkaAcls(role: KafkaRole, context: AclContext): RequiredAcl[] {
  const everyTopic = { resourceType: 'TOPIC', resourceName: '*', patternType: 'LITERAL' } as const;
  switch (role) {
    case 'collector':
      return [
        {
          cluster: 'source',
          resourceType: 'GROUP',
          resourceName: context.collectorGroup,
          patternType: 'LITERAL',
          operation: 'READ',
          why: 'the collector instances share this consumer group to split __consumer_offsets',
        },
        {
          cluster: 'source',
          ...everyTopic,
          operation: 'READ',
          why: "__consumer_offsets, and the records at each committed offset (the commit's anchor)",
        },
      ];
    case 'translator':
      // The translator connects to its target only: the collector already anchored each commit to
      // the source records it needs.
      return [
        {
          cluster: 'target',
          ...everyTopic,
          operation: 'READ',
          why: 'the copies of those records on the target',
        },
      ];
    case 'committer':
      return [
        {
          cluster: 'target',
          resourceType: 'GROUP',
          resourceName: '*',
          patternType: 'LITERAL',
          operation: 'READ',
          why: "commit the groups' offsets (OffsetCommit) and read them back (OffsetFetch)",
        },
        {
          cluster: 'target',
          ...everyTopic,
          operation: 'READ',
          why: "commit offsets of the topic's partitions, and check them against the log bounds",
        },
      ];
    case 'cli': {
      const group = context.cutoverGroup ?? '<group>';
      return (['source', 'target'] as const).flatMap((cluster) => [
        {
          cluster,
          resourceType: 'GROUP',
          resourceName: group,
          patternType: 'LITERAL',
          operation: 'DESCRIBE',
          why: "cutover: the group's members and committed offsets",
        } satisfies RequiredAcl,
        {
          cluster,
          ...everyTopic,
          operation: 'READ',
          why: 'cutover: the records at both positions (its proof)',
        },
      ]);
    }
  }
}

/** The `kafka-acls.sh` command that grants `acl` to `principal`. */
export function kafkaAclsCommand(principal: string, acl: RequiredAcl, bootstrapServer: string): string {
  const resource =
    acl.resourceType === 'CLUSTER'
      ? '--cluster'
      : `--${acl.resourceType.toLowerCase()} '${acl.resourceName}'`;
  const pattern = acl.patternType === 'PREFIXED' ? ' --resource-pattern-type prefixed' : '';
  const operation = acl.operation.charAt(0) + acl.operation.slice(1).toLowerCase();
  return `kafka-acls.sh --bootstrap-server ${bootstrapServer} --command-config admin.properties --add --allow-principal ${principal} --operation ${operation} ${resource}${pattern}`;
}
