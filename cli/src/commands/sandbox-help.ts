// What `offsetsync --help` and `offsetsync sandbox --help` say about `sandbox`; the command is ./sandbox.ts.
import type { CommandDescription } from '../command.js';

const HELP = `offsetsync sandbox [options]

Starts everything on this machine and shows a consumer group moving between clusters:
  - two single-node Apache Kafka clusters (source and target) and a NATS JetStream server,
    on free loopback ports, their data in a temporary folder;
  - Apache Kafka MirrorMaker 2 copying a demo topic from source to target (identity topic names,
    its own offset sync switched off);
  - the four offsetsync services as processes of their own: collector, translator, committer, health;
  - a demo producer (many records share a timestamp) and a demo consumer group that consumes part of
    the topic on the source, stops, and continues on the target once offsetsync committed its position
    there. It prints "moved group <group>: replayed=<n> skipped=<n>", judged by record identity.
Then it keeps running (the health gRPC API stays up) until Ctrl-C or SIGTERM, and stops every process
it started. Needs java (17+), mvn (the first run fetches the Kafka jars) and nats-server on PATH.

With --prometheus it also runs Debian's Prometheus (/usr/bin/prometheus, apt-get install prometheus)
scraping the four services every 2 s with the Helm chart's alert rules
(deploy/helm/offsetsync/files/offsetsync-alerts.rules.yaml) and prints its address. Stop the committer
and OffsetsyncLinkSourceOnly fires about a minute later (its for: 1m).

Options:
  --topic <name>        demo topic (default demo-orders)
  --group <id>          demo consumer group (default demo-app)
  --partitions <n>      partitions of the demo topic (default 3)
  --records <n>         demo records per partition (default 2000)
  --prometheus          also run Prometheus with the alert rules (see above)
  -h, --help            show this help

Exit codes: 0 after Ctrl-C or SIGTERM, 1 when the start or the move failed, 64 for a bad command line.

Example:
  npm start                      # builds, then runs offsetsync sandbox
  offsetsync sandbox --records 10000
  offsetsync sandbox --prometheus
`;

export const sandboxDescription: CommandDescription = {
  name: 'sandbox',
  summary: 'run Kafka, MirrorMaker 2, NATS and the four services locally and move a demo group',
  help: HELP,
};
