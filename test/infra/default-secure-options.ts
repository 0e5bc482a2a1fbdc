// The users of a secured test bed: the Kafka principals docs/security.md names, and the NATS users the
// product itself derives for the deployment (`offsetsync security nats-config`), each with exactly the
// permissions the product says it needs, so the services run on the bed as they would in production.
import { randomPassword } from '@offsetsync/testbed';
import { deploymentNatsUsers } from '../../cli/src/security/nats-authorization.js';
import type { SecureTestbedOptions } from './testbed.js';

/** Kafka users of the secured bed besides its admin (`admin`, a super user the bed always creates). */
const KAFKA_USERS = [
  'offsetsync-collector',
  'offsetsync-translator',
  'offsetsync-committer',
  'offsetsync-cli',
  'replicator',
  'app',
] as const;

/** The deployment the bed's NATS users are made for: its links and its subject prefix. */
export interface SecureBedDeployment {
  links: { source: string; target: string }[];
  subjectPrefix: string;
}

/** The bed's own two clusters, one link, offsetsync's default prefix. */
const DEFAULT_SECURE_DEPLOYMENT: SecureBedDeployment = {
  links: [{ source: 'source', target: 'target' }],
  subjectPrefix: 'osync',
};

/** The secured bed's users for `deployment`, each with a fresh random password. */
export function defaultSecureOptions(
  deployment: SecureBedDeployment = DEFAULT_SECURE_DEPLOYMENT,
): SecureTestbedOptions {
  const users = deploymentNatsUsers({
    links: deployment.links,
    nats: { subjectPrefix: deployment.subjectPrefix },
  });
  return {
    kafkaUsers: Object.fromEntries(KAFKA_USERS.map((user) => [user, randomPassword()])),
    natsUsers: users.map(({ user, permissions }) => ({ user, password: randomPassword(), permissions })),
  };
}
