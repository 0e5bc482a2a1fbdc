// The nats-server `authorization` block for one deployment: one user per role and, for collectors,
// translators and committers, per cluster they serve, so a stolen credential reaches one link's subjects
// only. Passwords are nats-server environment references (`$OFFSETSYNC_NATS_PASSWORD_<USER>`), never
// values.
import { Names } from '@offsetsync/contracts';
import { natsPermissions, type NatsRole, type NatsRoleScope } from '@offsetsync/jetstream';
import type { OffsetSyncConfig } from '@offsetsync/runtime';

/** One NATS user of the deployment and what it may do. */
export interface DeploymentNatsUser {
  user: string;
  role: NatsRole;
  /** What the user serves, in words, for the comment above it. */
  serves: string;
  permissions: ReturnType<typeof natsPermissions>;
}

/** The users of every role the config's links need. */
export function deploymentNatsUsers(config: {
  links: ReadonlyArray<Pick<OffsetSyncConfig['links'][number], 'source' | 'target'>>;
  nats: Pick<OffsetSyncConfig['nats'], 'subjectPrefix'>;
}): DeploymentNatsUser[] {
  const names = new Names(config.nats.subjectPrefix);
  const links = config.links;
  const user = (role: NatsRole, name: string, serves: string, scope: Omit<NatsRoleScope, 'links'>) => ({
    user: name,
    role,
    serves,
    permissions: natsPermissions(names, role, { links, ...scope }),
  });
  const sources = [...new Set(links.map((l) => l.source))];
  const targets = [...new Set(links.map((l) => l.target))];
  return [
    ...sources.map((source) =>
      user('collector', `collector-${source}`, `the collector of source ${source}`, { source }),
    ),
    ...targets.flatMap((target) => [
      user('translator', `translator-${target}`, `the translator of target ${target}`, { target }),
      user('committer', `committer-${target}`, `the committer of target ${target}`, { target }),
    ]),
    user('health', 'health', 'the health service', {}),
    user('provision', 'provision', '`offsetsync provision` (JetStream admin; a Job, not a service)', {}),
  ];
}

/** The environment variable a user's password is read from by nats-server. */
function passwordVariable(user: string): string {
  return `OFFSETSYNC_NATS_PASSWORD_${user.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/** The block as nats-server configuration text. */
export function natsAuthorizationBlock(users: readonly DeploymentNatsUser[]): string {
  const list = (subjects: readonly string[]) => subjects.map((s) => JSON.stringify(s)).join(', ');
  const deny = (subjects: readonly string[] | undefined) =>
    subjects === undefined || subjects.length === 0 ? '' : `, deny: [${list(subjects)}]`;
  const lines = ['authorization {', '  users = ['];
  for (const u of users) {
    lines.push(
      `    # ${u.serves}`,
      `    { user: ${JSON.stringify(u.user)}, password: $${passwordVariable(u.user)}, permissions: {`,
      `        publish: { allow: [${list(u.permissions.publish.allow)}]${deny(u.permissions.publish.deny)} }`,
      `        subscribe: { allow: [${list(u.permissions.subscribe.allow)}] }`,
      '    } }',
    );
  }
  lines.push('  ]', '}');
  return `${lines.join('\n')}\n`;
}
