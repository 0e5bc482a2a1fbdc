// `offsetsync collector|translator|committer|health --config <file>`: one service in this process. The
// service's module (and the runtime it starts) is imported only when the command runs.
import type { ServiceDefinition } from '@offsetsync/runtime';
import { lazyCommand, type Command } from '../command.js';

type Role = ServiceDefinition['role'];

const SUMMARIES: Record<Role, string> = {
  collector: "read the source cluster's committed offsets and publish them, anchored to their records",
  translator: 'translate anchored source commits to offsets on one target cluster',
  committer: 'commit translated offsets to the consumer groups of one target cluster',
  health: 'correlate both sides of every link and serve the gRPC health API',
};

/** Each service's definition, imported when its command runs; in the order `offsetsync --help` lists them. */
const DEFINITIONS: Record<Role, () => Promise<ServiceDefinition>> = {
  collector: async () => (await import('@offsetsync/collector/service')).collectorService,
  translator: async () => (await import('@offsetsync/translator/service')).translatorService,
  committer: async () => (await import('@offsetsync/committer/service')).committerService,
  health: async () => (await import('@offsetsync/health/service')).healthService,
};

function serviceHelp(role: Role): string {
  return `offsetsync ${role} --config <file>

Runs the ${role} service: ${SUMMARIES[role]}.
It runs until SIGTERM or SIGINT, then stops in order within the configured grace period.

Options:
  -c, --config <file>  YAML configuration file (or the environment variable OFFSETSYNC_CONFIG).
                       Any setting can be overridden by OFFSETSYNC_<PATH>, e.g.
                       OFFSETSYNC_LOGGING__LEVEL=debug.
  -h, --help           Show this help.

Exit codes: 0 after an orderly stop, 1 when the start failed, 2 when the configuration is invalid.

Example:
  offsetsync ${role} --config /etc/offsetsync/offsetsync.yaml
`;
}

function serviceCommand(role: Role): Command {
  return lazyCommand({ name: role, summary: SUMMARIES[role], help: serviceHelp(role) }, async () => {
    const [{ runServiceMain }, definition] = await Promise.all([
      import('@offsetsync/runtime'),
      DEFINITIONS[role](),
    ]);
    return async (argv) => {
      // runServiceMain owns the process from here on: it exits on a bad config, a failed start or a
      // signal. Once the service started, the open connections keep the process alive.
      await runServiceMain({ ...definition, argv });
      return 0;
    };
  });
}

export const serviceCommands: readonly Command[] = (Object.keys(DEFINITIONS) as Role[]).map(serviceCommand);
