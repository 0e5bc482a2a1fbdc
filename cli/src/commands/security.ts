// `offsetsync security nats-config|kafka-acls`: prints the NATS permissions and Kafka ACLs of the
// deployment the configuration describes.
import { parseArgs } from 'node:util';
import { ConfigError } from '@offsetsync/contracts';
import { loadConfig, type OffsetSyncConfig } from '@offsetsync/runtime';
import { type CommandIo, UsageError } from '../command.js';
import { kafkaAclLines } from '../security/kafka-acl-lines.js';
import { deploymentNatsUsers, natsAuthorizationBlock } from '../security/nats-authorization.js';

const EXIT_CONFIG = 2;

export async function runSecurity(argv: readonly string[], io: CommandIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: { config: { type: 'string', short: 'c' } },
      strict: true,
      allowPositionals: true,
    });
  } catch (error: unknown) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const [what, ...rest] = parsed.positionals;
  if ((what !== 'nats-config' && what !== 'kafka-acls') || rest.length > 0) {
    throw new UsageError('say what to print: offsetsync security nats-config|kafka-acls --config <file>');
  }
  let config: OffsetSyncConfig;
  try {
    config = loadConfig({ file: parsed.values.config });
  } catch (error: unknown) {
    if (!(error instanceof ConfigError)) throw error;
    io.stderr(`offsetsync security: ${error.message}\n`);
    return EXIT_CONFIG;
  }
  if (config.links.length === 0) {
    io.stderr('offsetsync security: the configuration has no links, so no role needs anything\n');
    return EXIT_CONFIG;
  }
  io.stdout(
    what === 'nats-config' ? natsAuthorizationBlock(deploymentNatsUsers(config)) : kafkaAclLines(config),
  );
  return Promise.resolve(0);
}
