// The kafka-acls.sh lines that grant every offsetsync role what it needs on each cluster of a deployment.
import { kafkaAclsCommand, requiredKafkaAcls, type KafkaRole } from '@offsetsync/kafka';
import type { OffsetSyncConfig } from '@offsetsync/runtime';

/** The principal each role authenticates as, `User:offsetsync-<role>` unless told otherwise. */
export type RolePrincipals = Record<KafkaRole, string>;

const DEFAULT_PRINCIPALS: RolePrincipals = {
  collector: 'User:offsetsync-collector',
  translator: 'User:offsetsync-translator',
  committer: 'User:offsetsync-committer',
  cli: 'User:offsetsync-cli',
};

/** Per cluster alias, the commented kafka-acls.sh lines of every role that works on it. */
export function kafkaAclLines(
  config: Pick<OffsetSyncConfig, 'links' | 'clusters' | 'collector'>,
  principals: RolePrincipals = DEFAULT_PRINCIPALS,
): string {
  const out: string[] = [];
  const aliases = [...new Set(config.links.flatMap((l) => [l.source, l.target]))];
  for (const alias of aliases) {
    const bootstrap = config.clusters[alias]?.bootstrapServers[0] ?? `<${alias}-broker:port>`;
    const isSource = config.links.some((l) => l.source === alias);
    const isTarget = config.links.some((l) => l.target === alias);
    out.push(`# cluster ${alias}${isSource ? ' (source)' : ''}${isTarget ? ' (target)' : ''}`);
    // A cluster that is both a source and a target needs an ACL both sides ask for once.
    const granted = new Set<string>();
    for (const role of ['collector', 'translator', 'committer', 'cli'] as const) {
      const collectorGroup =
        config.collector?.cluster === alias
          ? config.collector.consumerGroup
          : `offsetsync-collector-${alias}`;
      for (const acl of requiredKafkaAcls(role, { collectorGroup })) {
        if ((acl.cluster === 'source' && !isSource) || (acl.cluster === 'target' && !isTarget)) continue;
        const line = kafkaAclsCommand(principals[role], acl, bootstrap);
        if (granted.has(line)) continue;
        granted.add(line);
        out.push(`# ${role}: ${acl.why}`, line);
      }
    }
    out.push('');
  }
  return out.join('\n');
}
