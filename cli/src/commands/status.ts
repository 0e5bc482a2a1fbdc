// `offsetsync status`: asks the health service's gRPC API how every link and group is doing, and prints
// tables for people or JSON for scripts.
import { parseArgs } from 'node:util';
import type { ChannelCredentials } from '@grpc/grpc-js';
import {
  ListGroupsRequest,
  ListLinksRequest,
  OffsetSyncHealthClient,
  PartitionSyncState,
  type GroupStatus,
  type ListGroupsResponse,
  type ListLinksResponse,
} from '@offsetsync/contracts';
import { type CommandIo, UsageError } from '../command.js';
import { healthConnection, unary } from '../health-client.js';
import { HEALTH_CONNECTION_OPTIONS } from '../health-connection-options.js';
import {
  formatReport,
  groupRows,
  linkRow,
  linkStateName,
  parsePartitionState,
  type StatusReport,
} from './status-format.js';

/** Exit code when the health API cannot be asked (sysexits EX_UNAVAILABLE). */
const EXIT_UNAVAILABLE = 69;

interface StatusOptions {
  address: string;
  json: boolean;
  source: string;
  target: string;
  group: string;
  groupPrefix: string;
  state: PartitionSyncState;
  groups: boolean;
  timeoutMs: number;
  credentials: ChannelCredentials;
}

function parseStatusArgs(argv: readonly string[]): StatusOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        ...HEALTH_CONNECTION_OPTIONS,
        json: { type: 'boolean', default: false },
        source: { type: 'string', default: '' },
        target: { type: 'string', default: '' },
        group: { type: 'string', default: '' },
        'group-prefix': { type: 'string', default: '' },
        state: { type: 'string' },
        'no-groups': { type: 'boolean', default: false },
        timeout: { type: 'string', default: '5000' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error: unknown) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const connection = healthConnection(values);
  const timeoutMs = Number(values.timeout);
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) {
    throw new UsageError(`--timeout must be a positive number of milliseconds, got ${values.timeout}`);
  }
  let state = PartitionSyncState.PARTITION_SYNC_STATE_UNSPECIFIED;
  if (values.state !== undefined) {
    const parsed = parsePartitionState(values.state);
    if (parsed === undefined) throw new UsageError(`--state: unknown state ${JSON.stringify(values.state)}`);
    state = parsed;
  }
  return {
    address: connection.address,
    json: values.json,
    source: values.source,
    target: values.target,
    group: values.group,
    groupPrefix: values.group !== '' ? values.group : values['group-prefix'],
    state,
    groups: !values['no-groups'],
    timeoutMs,
    credentials: connection.credentials,
  };
}

/** Asks the health API for links and (unless turned off) every matching group, page by page. */
export async function fetchStatus(options: StatusOptions): Promise<StatusReport> {
  const client = new OffsetSyncHealthClient(options.address, options.credentials);
  try {
    const links: ListLinksResponse = await unary(
      (r, m, o, cb) => client.listLinks(r, m, o, cb),
      ListLinksRequest.fromPartial({}),
      options.timeoutMs,
    );
    const groups: GroupStatus[] = [];
    if (options.groups) {
      let pageToken = '';
      do {
        const page: ListGroupsResponse = await unary(
          (r, m, o, cb) => client.listGroups(r, m, o, cb),
          ListGroupsRequest.fromPartial({
            sourceCluster: options.source,
            targetCluster: options.target,
            groupPrefix: options.groupPrefix,
            state: options.state,
            pageSize: 1000,
            pageToken,
          }),
          options.timeoutMs,
        );
        groups.push(...page.groups.filter((g) => options.group === '' || g.group === options.group));
        pageToken = page.nextPageToken;
      } while (pageToken !== '');
    }
    const shownLinks = links.links.filter(
      (l) =>
        (options.source === '' || l.sourceCluster === options.source) &&
        (options.target === '' || l.targetCluster === options.target),
    );
    return {
      overallState: linkStateName(links.overallState),
      links: shownLinks.map(linkRow),
      groups: groups.flatMap(groupRows),
    };
  } finally {
    client.close();
  }
}

/** `offsetsync status ...`: prints the report, or says why the health service could not be asked. */
export async function runStatus(argv: readonly string[], io: CommandIo): Promise<number> {
  const options = parseStatusArgs(argv);
  let report: StatusReport;
  try {
    report = await fetchStatus(options);
  } catch (error: unknown) {
    const reason = error instanceof Error ? error.message : String(error);
    io.stderr(`offsetsync status: cannot ask the health service at ${options.address}: ${reason}\n`);
    return EXIT_UNAVAILABLE;
  }
  io.stdout(options.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
  return 0;
}
