import { ServiceRole } from './gen/offsetsync/v1/events.js';
import { encodeSubjectToken as token } from './subject-token.js';

/** One committed position's identity within a source cluster: a consumer group's topic partition. */
export interface GroupPartition {
  group: string;
  topic: string;
  partition: number;
}

/**
 * Subject and resource names for one offsetsync installation. Every name derives from the prefix, so
 * two installations (or two tests) can share a NATS server without seeing each other.
 *
 * Layout (tokens encoded with encodeSubjectToken):
 *   <prefix>.committed.<source>.<group>.<topic>.<partition>
 *   <prefix>.committed.<source>.<group>._          (whole-group events: the group was deleted)
 *   <prefix>.translated.<source>.<target>.<group>.<topic>.<partition>
 *   <prefix>.applied.<source>.<target>.<group>.<topic>.<partition>
 *   <prefix>.heartbeat.<role>.<instance>
 */
/** The kinds of stream offsetsync keeps. */
export type StreamKind = 'committed' | 'translated' | 'applied' | 'heartbeats';

export class Names {
  readonly prefix: string;

  constructor(prefix: string) {
    if (!/^[A-Za-z0-9_-]+$/.test(prefix)) {
      throw new RangeError(`subject prefix '${prefix}' must be one token of [A-Za-z0-9_-]`);
    }
    this.prefix = prefix;
  }

  committed(source: string, key: GroupPartition): string {
    return `${this.prefix}.committed.${token(source)}.${partitionTokens(key)}`;
  }

  /** Subject of events about a whole group; one token shorter than any partition subject, so never equal to one. */
  committedGroup(source: string, group: string): string {
    return `${this.prefix}.committed.${token(source)}.${token(group)}._`;
  }

  committedFilter(source?: string): string {
    return source === undefined
      ? `${this.prefix}.committed.>`
      : `${this.prefix}.committed.${token(source)}.>`;
  }

  translated(source: string, target: string, key: GroupPartition): string {
    return `${this.prefix}.translated.${token(source)}.${token(target)}.${partitionTokens(key)}`;
  }

  translatedFilter(source?: string, target?: string): string {
    return linkFilter(`${this.prefix}.translated`, source, target);
  }

  applied(source: string, target: string, key: GroupPartition): string {
    return `${this.prefix}.applied.${token(source)}.${token(target)}.${partitionTokens(key)}`;
  }

  appliedFilter(source?: string, target?: string): string {
    return linkFilter(`${this.prefix}.applied`, source, target);
  }

  heartbeat(role: ServiceRole | RoleToken, instance: string): string {
    const roleToken = typeof role === 'string' ? role : ROLE_TOKENS[role];
    return `${this.prefix}.heartbeat.${token(roleToken)}.${token(instance)}`;
  }

  heartbeatFilter(role?: RoleToken): string {
    return role === undefined ? `${this.prefix}.heartbeat.>` : `${this.prefix}.heartbeat.${token(role)}.*`;
  }

  stream(kind: StreamKind): string {
    return `${this.prefix.toUpperCase()}_${kind.toUpperCase()}`;
  }

  /** Every subject of the stream `kind`: what it stores, and what reading all of it filters on. */
  streamFilter(kind: StreamKind): string {
    switch (kind) {
      case 'committed':
        return this.committedFilter();
      case 'translated':
        return this.translatedFilter();
      case 'applied':
        return this.appliedFilter();
      case 'heartbeats':
        return this.heartbeatFilter();
    }
  }

  /** JetStream KV bucket names. */
  bucket(kind: 'applied-versions'): string {
    return `${this.prefix}_${kind.replaceAll('-', '_')}`;
  }

  /**
   * KV key for per-link, per-partition state (the committer's last applied version). Dots separate tokens, so keys of one link share a prefix that can be watched.
   */
  /** The first tokens of every {@link linkKey} of one link. */
  linkKeyPrefix(source: string, target: string): string {
    return `${token(source)}.${token(target)}`;
  }

  linkKey(source: string, target: string, key: GroupPartition): string {
    return `${token(source)}.${token(target)}.${partitionTokens(key)}`;
  }
}

/** The subject token of each service role in heartbeat subjects. */
const ROLE_TOKENS = {
  [ServiceRole.SERVICE_ROLE_UNSPECIFIED]: 'unspecified',
  [ServiceRole.SERVICE_ROLE_COLLECTOR]: 'collector',
  [ServiceRole.SERVICE_ROLE_TRANSLATOR]: 'translator',
  [ServiceRole.SERVICE_ROLE_COMMITTER]: 'committer',
  [ServiceRole.SERVICE_ROLE_HEALTH]: 'health',
  [ServiceRole.UNRECOGNIZED]: 'unrecognized',
} as const satisfies Record<ServiceRole, string>;

export type RoleToken = (typeof ROLE_TOKENS)[ServiceRole];

function partitionTokens(key: GroupPartition): string {
  if (!Number.isInteger(key.partition) || key.partition < 0) {
    throw new RangeError(`partition must be a non-negative integer, got ${key.partition}`);
  }
  return `${token(key.group)}.${token(key.topic)}.${key.partition}`;
}

function linkFilter(base: string, source: string | undefined, target: string | undefined): string {
  if (source === undefined) return `${base}.>`;
  if (target === undefined) return `${base}.${token(source)}.>`;
  return `${base}.${token(source)}.${token(target)}.>`;
}
