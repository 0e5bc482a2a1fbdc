// `offsetsync collector|translator|committer|health --config <file>`: one service in this process.
import { runServiceMain, type ServiceDefinition } from '@offsetsync/runtime';
import { collectorService } from '@offsetsync/collector/service';
import { committerService } from '@offsetsync/committer/service';
import { healthService } from '@offsetsync/health/service';
import { translatorService } from '@offsetsync/translator/service';
import type { Command } from '../command.js';

const SUMMARIES: Record<ServiceDefinition['role'], string> = {
  collector: "read the source cluster's committed offsets and publish them, anchored to their records",
  translator: 'translate anchored source commits to offsets on one target cluster',
  committer: 'commit translated offsets to the consumer groups of one target cluster',
  health: 'correlate both sides of every link and serve the gRPC health API',
};

function serviceHelp(role: ServiceDefinition['role']): string {
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

function serviceCommand(definition: ServiceDefinition): Command {
  return {
    name: definition.role,
    summary: SUMMARIES[definition.role],
    help: serviceHelp(definition.role),
    async run(argv) {
      // runServiceMain owns the process from here on: it exits on a bad config, a failed start or a
      // signal. Once the service started, the open connections keep the process alive.
      await runServiceMain({ ...definition, argv });
      return 0;
    },
  };
}

export const serviceCommands: readonly Command[] = [
  collectorService,
  translatorService,
  committerService,
  healthService,
].map(serviceCommand);
