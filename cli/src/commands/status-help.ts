// What `offsetsync --help` and `offsetsync status --help` say about `status`; the command is ./status.ts.
import type { CommandDescription } from '../command.js';
import { HEALTH_CONNECTION_HELP } from '../health-connection-options.js';

const HELP = `offsetsync status [options]

Shows how offsets are distributed: the state of every source -> target link (HEALTHY, SOURCE_ONLY,
TARGET_ONLY, STALLED, LAGGING, DOWN, with the reason) and, per consumer group and partition, the source
offset, the target offset, whether it is exact, the lag and the records a consumer would read again
(REPLAY) or pass over (SKIP) if it moved to the target now. On a link that observes (links[].mode
observe) nothing is committed: TARGET shows in parentheses the offset offsetsync would commit, and the
state is OBSERVED. Asks the gRPC API of the health service (\`offsetsync health\`).

Options:
  --json                  Print JSON ({overallState, links, groups}) instead of tables.
  --source <alias>        Only links and groups from this source cluster.
  --target <alias>        Only links and groups to this target cluster.
  --group <id>            Only this consumer group (exact id).
  --group-prefix <text>   Only groups whose id starts with this text.
  --state <state>         Only groups with a partition in this state: synced, pending,
                          skipped-active-on-target, refused, target-ahead, deleted, excluded,
                          observed.
  --no-groups             Links only.
${HEALTH_CONNECTION_HELP}
  --timeout <ms>          Deadline of each request. Default: 5000.
  -h, --help              Show this help.

Exit codes: 0 when the API answered, 64 for a bad command line, 69 when the API could not be reached.

Examples:
  offsetsync status --address health.offsetsync:50051
  offsetsync status --json --group orders-app | jq '.groups[] | {partition, replayIfMoved}'
`;

export const statusDescription: CommandDescription = {
  name: 'status',
  summary: 'show the state of every link and consumer group, from the health service',
  help: HELP,
};
