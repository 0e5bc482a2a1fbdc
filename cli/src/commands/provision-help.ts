// What `offsetsync --help` and `offsetsync provision --help` say about `provision`; the command is
// ./provision.ts.
import type { CommandDescription } from '../command.js';

const HELP = `offsetsync provision --config <file> [options]

Creates or corrects everything offsetsync keeps in NATS JetStream for the deployment the configuration
describes: the streams (committed, translated, applied, heartbeats), the applied-versions KV bucket, and
for every link the translator's and the committer's durable consumers. It is the one step that needs
JetStream admin rights: run it with the provisioning NATS user before the services start and after
every upgrade (the Helm chart runs it as a pre-install/pre-upgrade hook Job); services with
nats.provisioning: verify then need no admin right. Idempotent.

Options:
  -c, --config <file>     YAML configuration file (or OFFSETSYNC_CONFIG); its nats section says how to
                          connect (use the provisioning user's credentials).
  --timeout <ms>          Give up when NATS is not reachable within this time. Default: 120000.
  -h, --help              Show this help.

Prints one JSON object: what was created, updated or found unchanged.
Exit codes: 0 when everything is in place, 1 when provisioning failed, 2 for an invalid configuration,
64 for a bad command line.

Example:
  OFFSETSYNC_NATS__USER=provision OFFSETSYNC_NATS__PASSWORD_FILE=/secrets/nats/password \\
    offsetsync provision --config /etc/offsetsync/offsetsync.yaml
`;

export const provisionDescription: CommandDescription = {
  name: 'provision',
  summary: 'create the JetStream streams, KV bucket and durable consumers (needs NATS admin rights)',
  help: HELP,
};
