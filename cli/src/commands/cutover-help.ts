// What `offsetsync --help` and `offsetsync cutover --help` say about `cutover`; the command is ./cutover.ts.
import type { CommandDescription } from '../command.js';
import { HEALTH_CONNECTION_HELP } from '../health-connection-options.js';

const HELP = `offsetsync cutover --group <group> --from <source> --to <target> [options]

Verifies that a consumer group can move from the source cluster to the target cluster now. It waits until
the group has no members on the source and the offsets it last committed there have been translated
exactly and committed on the target, and proves it on the target itself: for every partition the record at
the group's committed offset there is the counterpart (same timestamp, same fingerprint of key and value)
of the next record on the source, and none of the --proof-window records that follow is a copy of a record
the group already consumed. Then it says it is safe to start the consumers on the target. When that does
not happen within --timeout it says why not: still active on the source, a translation pending or inexact
(with the records a consumer would replay), refused, the group active on the target, kept off the target
by the link's filter (EXCLUDED) or the link only observing (OBSERVED), or the target's position not
proven (NOT_PROVEN, REPLAY_ON_TARGET, TARGET_UNREADABLE).

Options:
  --group <group>         Consumer group id (required).
  --from <alias>          Source cluster alias from the config (required).
  --to <alias>            Target cluster alias from the config (required).
  -c, --config <file>     offsetsync config file with the clusters (or OFFSETSYNC_CONFIG).
${HEALTH_CONNECTION_HELP}
                          The address defaults to the config's health section, if it has one.
  --timeout <dur>         How long to wait for the cutover to become safe. Default: 2m.
  --interval <dur>        How often to look again while waiting. Default: 1s.
  --proof-window <n>      Records read on each side of the committed offsets, on both clusters, to
                          prove the target's position. Default: 500; at most 10000. A replay further
                          than that after the target offset is not seen.
  --json                  Print the outcome as one JSON object instead of text, with what was checked
                          per partition ("proofs").
  --dry-run               Look once, without waiting, and show per partition the source offset, the
                          target's (on a link that observes: what offsetsync would commit, in
                          parentheses) and the records a consumer moving now would replay or skip
                          ("plan" in --json). The only way to ask about a link with mode observe: a
                          cutover to it is refused (OBSERVED), since nothing is committed there.
  -h, --help              Show this help.

Exit codes: 0 safe, 1 not safe within --timeout, 2 invalid config, 64 bad command line.

Examples:
  offsetsync cutover --config offsetsync.yaml --group billing --from onprem --to cloud
  offsetsync cutover -c offsetsync.yaml --group billing --from onprem --to cloud --timeout 10m --json
  offsetsync cutover -c offsetsync.yaml --group billing --from onprem --to cloud --dry-run
`;

export const cutoverDescription: CommandDescription = {
  name: 'cutover',
  summary:
    'wait until a consumer group can start on the target without replaying or skipping, or say why not',
  help: HELP,
};
