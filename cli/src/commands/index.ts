// Every `offsetsync` subcommand, in the order `offsetsync --help` lists them. Only their descriptions
// (name, summary, help) are loaded here; each command's module is imported when it runs, so that
// `offsetsync collector` loads neither the other services nor the sandbox and its launcher of real
// servers (@offsetsync/testbed, which the container image does not hold).
import { lazyCommand, type Command } from '../command.js';
import { cutoverDescription } from './cutover-help.js';
import { provisionDescription } from './provision-help.js';
import { sandboxDescription } from './sandbox-help.js';
import { securityDescription } from './security-help.js';
import { serviceCommands } from './service-commands.js';
import { statusDescription } from './status-help.js';

export const commands: readonly Command[] = [
  ...serviceCommands,
  lazyCommand(statusDescription, async () => (await import('./status.js')).runStatus),
  lazyCommand(cutoverDescription, async () => (await import('./cutover.js')).runCutover),
  lazyCommand(provisionDescription, async () => (await import('./provision.js')).runProvision),
  lazyCommand(securityDescription, async () => (await import('./security.js')).runSecurity),
  lazyCommand(sandboxDescription, loadSandbox),
];

/**
 * The sandbox is a development command: it starts Kafka, MirrorMaker 2 and nats-server through
 * @offsetsync/testbed, a development dependency of the CLI that a clone has (`npm start`) and the
 * container image does not. There it says so instead of failing on a missing module.
 */
async function loadSandbox(): Promise<Command['run']> {
  try {
    return (await import('./sandbox.js')).runSandbox;
  } catch (error: unknown) {
    if (!isMissingTestbed(error)) throw error;
    return (_argv, io) => {
      io.stderr(
        'offsetsync sandbox: this installation has no @offsetsync/testbed (the container image leaves ' +
          'it out); the sandbox runs from a clone of the repository: npm ci && npm start\n',
      );
      return Promise.resolve(1);
    };
  }
}

function isMissingTestbed(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return (
    code === 'ERR_MODULE_NOT_FOUND' && typeof message === 'string' && message.includes('@offsetsync/testbed')
  );
}
