// The NATS subjects each offsetsync service may publish and subscribe to: least privilege, derived from the
// same names the services use, so the nats-server authorization block an operator installs (printed by
// `offsetsync security nats`, shown in docs/security.md) cannot drift from the code. Stream, consumer and
// KV bucket creation is in none of them but `provision`'s: the long-running services only read stream and
// consumer info, fetch from their own durable consumers, and publish on their own subjects.
import type { Names, StreamKind } from '@offsetsync/contracts';
import { committerDurables, translatorDurable } from './durable-consumers.js';

/** The roles that get NATS credentials of their own. */
export type NatsRole = 'collector' | 'translator' | 'committer' | 'health' | 'provision';

/** What one role serves: the links decide which subjects of a shared stream are its own. */
export interface NatsRoleScope {
  /** The source -> target links of the deployment. */
  links: readonly { source: string; target: string }[];
  /** The collector's source cluster. */
  source?: string;
  /** The translator's or committer's target cluster. */
  target?: string;
}

/** The streams health reads (all of them but the applied-versions bucket's). */
const HEALTH_STREAM_KINDS: readonly StreamKind[] = ['committed', 'translated', 'applied', 'heartbeats'];

/**
 * The streams each role reads, publishes to or looks up: the ones whose info it may ask for, and the
 * ones a service in `nats.provisioning: verify` checks at start.
 */
export const STREAMS_OF_ROLE: Readonly<Record<NatsRole, readonly StreamKind[]>> = {
  collector: ['committed', 'heartbeats'],
  translator: ['committed', 'translated', 'heartbeats'],
  // It reads the committed stream's newest event of a key when the application committed on the target.
  committer: ['committed', 'translated', 'applied', 'heartbeats'],
  health: ['committed', 'translated', 'applied', 'heartbeats'],
  provision: ['committed', 'translated', 'applied', 'heartbeats'],
};

/**
 * A nats-server `permissions` block: subjects allowed, everything else denied; a subject both allowed and
 * denied is denied (nats-server's rule).
 */
export interface NatsPermissions {
  publish: { allow: string[]; deny?: string[] };
  subscribe: { allow: string[] };
}

/**
 * The inbox prefix of a role's connection: replies (JetStream acknowledgements, fetched messages) come to
 * subjects under it, so each role may subscribe to its own replies only and cannot read another's.
 */
export function inboxPrefix(names: Names, role: NatsRole): string {
  return `_INBOX_${names.prefix}_${role}`;
}

/** The permissions of `role` in the deployment `scope`. Throws when the scope lacks what the role needs. */
export function natsPermissions(names: Names, role: NatsRole, scope: NatsRoleScope): NatsPermissions {
  const api = '$JS.API';
  const streams = {
    committed: names.stream('committed'),
    translated: names.stream('translated'),
    applied: names.stream('applied'),
    heartbeats: names.stream('heartbeats'),
  };
  const bucket = names.bucket('applied-versions');
  const own = {
    inbox: `${inboxPrefix(names, role)}.>`,
    // jetstreamManager() asks for the account's JetStream info first.
    accountInfo: `${api}.INFO`,
    streamInfo: STREAMS_OF_ROLE[role].map((kind) => `${api}.STREAM.INFO.${names.stream(kind)}`),
  };
  const consumer = (stream: string, durable: string) => [
    `${api}.CONSUMER.INFO.${stream}.${durable}`,
    `${api}.CONSUMER.MSG.NEXT.${stream}.${durable}`,
    // Acknowledgements are published to the reply subject of each delivered message.
    `$JS.ACK.${stream}.${durable}.>`,
  ];
  switch (role) {
    case 'collector': {
      const source = required(scope.source, 'collector', 'source');
      return {
        publish: {
          allow: [
            names.committedFilter(source),
            names.heartbeatFilter('collector'),
            own.accountInfo,
            ...own.streamInfo,
          ],
        },
        subscribe: { allow: [own.inbox] },
      };
    }
    case 'translator': {
      const target = required(scope.target, 'translator', 'target');
      const sources = sourcesOf(scope, target);
      return {
        publish: {
          allow: [
            ...sources.map((source) => names.translatedFilter(source, target)),
            names.heartbeatFilter('translator'),
            own.accountInfo,
            ...own.streamInfo,
            // The newest translation of a key, to publish only newer ones (reads; cannot write).
            `${api}.STREAM.MSG.GET.${streams.translated}`,
            ...sources.flatMap((source) => consumer(streams.committed, translatorDurable(source, target))),
          ],
        },
        subscribe: { allow: [own.inbox] },
      };
    }
    case 'committer': {
      const target = required(scope.target, 'committer', 'target');
      const sources = sourcesOf(scope, target);
      return {
        publish: {
          allow: [
            ...sources.map((source) => names.appliedFilter(source, target)),
            // Its own keys of the applied-versions bucket (keys start with the link, see Names.linkKey).
            ...sources.map((source) => `$KV.${bucket}.${names.linkKeyPrefix(source, target)}.>`),
            names.heartbeatFilter('committer'),
            own.accountInfo,
            ...own.streamInfo,
            `${api}.STREAM.INFO.KV_${bucket}`,
            `${api}.STREAM.MSG.GET.KV_${bucket}`,
            // When the application itself committed on the target (a bidirectional link's own events).
            `${api}.STREAM.MSG.GET.${streams.committed}`,
            // Both modes' consumers: switching a link between commit and observe needs no new permissions.
            ...sources.flatMap((source) =>
              committerDurables(source, target).flatMap((durable) => consumer(streams.translated, durable)),
            ),
          ],
        },
        subscribe: { allow: [own.inbox] },
      };
    }
    case 'health': {
      // Health reads every stream through consumers of its own: ephemeral pull consumers (`health_<nuid>`,
      // see services/health/src/event-feed.ts) it names itself, so every request carries the name in its
      // subject. A name is one token and the durables' names cannot be told from its own by a wildcard,
      // so the durables are denied by name: health cannot create, update or pull from them. (The unnamed
      // `CONSUMER.CREATE.<stream>` form is not granted: its payload may name a durable and update it.)
      const readable = HEALTH_STREAM_KINDS.map((kind) => ({
        stream: streams[kind],
        filter: names.streamFilter(kind),
      }));
      const durables = scope.links.flatMap(({ source, target }) => [
        { stream: streams.committed, durable: translatorDurable(source, target) },
        ...committerDurables(source, target).map((durable) => ({ stream: streams.translated, durable })),
      ]);
      return {
        publish: {
          allow: [
            names.heartbeatFilter('health'),
            own.accountInfo,
            ...own.streamInfo,
            ...readable.flatMap(({ stream, filter }) => [
              `${api}.CONSUMER.CREATE.${stream}.*.${filter}`,
              `${api}.CONSUMER.INFO.${stream}.*`,
              `${api}.CONSUMER.MSG.NEXT.${stream}.*`,
            ]),
          ],
          deny: durables.flatMap(({ stream, durable }) => [
            `${api}.CONSUMER.CREATE.${stream}.${durable}.>`,
            `${api}.CONSUMER.MSG.NEXT.${stream}.${durable}`,
          ]),
        },
        subscribe: { allow: [own.inbox] },
      };
    }
    case 'provision':
      return {
        publish: { allow: [`${api}.>`] },
        subscribe: { allow: [own.inbox] },
      };
  }
}

function required(value: string | undefined, role: NatsRole, what: string): string {
  if (value === undefined) throw new RangeError(`the ${role}'s NATS permissions need its ${what} cluster`);
  return value;
}

function sourcesOf(scope: NatsRoleScope, target: string): string[] {
  const sources = [...new Set(scope.links.filter((l) => l.target === target).map((l) => l.source))];
  if (sources.length === 0) throw new RangeError(`no link has target ${target}`);
  return sources;
}
