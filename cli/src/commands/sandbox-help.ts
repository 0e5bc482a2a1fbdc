// What `offsetsync --help` and `offsetsync sandbox --help` say about `sandbox`; the command is ./sandbox.ts.
import type { CommandDescription } from '../command.js';

const HELP = `offsetsync sandbox [options]

Starts everything on this machine and shows a consumer group moving from one cluster to two others:
  - three single-node Apache Kafka clusters (source, target and cloud) and a NATS JetStream server,
    on free loopback ports, their data in a temporary folder;
  - two Apache Kafka MirrorMaker 2 processes copying a demo topic from the source, one to target under
    the same name (IdentityReplicationPolicy), one to cloud as source.<topic> (its default policy),
    their own offset syncs switched off; each target's copy holds records of its own first, a
    different number on each, so one record sits at three different offsets;
  - the offsetsync services as processes of their own: a collector, a health service, and a
    translator and a committer for each target (one link source -> target, one source -> cloud);
  - a demo producer (many records share a timestamp) and a demo consumer group that consumes part of
    the topic on the source and stops. Once offsetsync committed its position on both targets, it
    prints the position per partition side by side ("partition 0: source <topic> <offset> -> target
    <topic> <offset>, cloud source.<topic> <offset>"), then the same group continues on each target in
    turn and it prints "moved group <group> to <target>: replayed=<n> skipped=<n>", judged by record
    identity.
Then it keeps running (the health gRPC API stays up) until Ctrl-C or SIGTERM, and stops every process
it started. Needs java (17+), mvn (the first run fetches the Kafka jars) and nats-server on PATH.

With --prometheus it also runs Debian's Prometheus (/usr/bin/prometheus, apt-get install prometheus)
scraping the offsetsync processes every 2 s with the Helm chart's alert rules
(deploy/helm/offsetsync/files/offsetsync-alerts.rules.yaml) and prints its address. Stop the committer
of target (its pid is on the "offsetsync running" line) and OffsetsyncLinkSourceOnly fires for the link
source -> target about a minute later (its for: 1m).

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
  summary: 'run Kafka, MirrorMaker 2, NATS and the services locally and move a demo group to two targets',
  help: HELP,
};
