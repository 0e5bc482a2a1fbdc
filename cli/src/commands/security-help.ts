// What `offsetsync --help` and `offsetsync security --help` say about `security`; the command is
// ./security.ts.
import type { CommandDescription } from '../command.js';

const HELP = `offsetsync security <nats-config|kafka-acls> --config <file>

Prints what a locked-down deployment of the configuration needs, derived from the code that uses it:
  nats-config   the nats-server authorization block: one user per role (per source for collectors, per
                target for translators and committers), each allowed exactly its own subjects and
                JetStream API calls; passwords are nats-server environment references.
  kafka-acls    the kafka-acls.sh lines that grant every role its ACLs on each cluster of the links.
docs/security.md explains both.

Options:
  -c, --config <file>  YAML configuration file (or OFFSETSYNC_CONFIG).
  -h, --help           Show this help.

Exit codes: 0, 2 for an invalid configuration, 64 for a bad command line.
`;

export const securityDescription: CommandDescription = {
  name: 'security',
  summary: 'print the NATS authorization block and the Kafka ACLs the deployment needs',
  help: HELP,
};
