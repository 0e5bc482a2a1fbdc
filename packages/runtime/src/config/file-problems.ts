// Files the configuration names (secrets, certificates) are checked when it loads, so that a missing
// Secret mount is reported with every other problem at start-up instead of as a failed login later.
import { accessSync, constants } from 'node:fs';
import type { ConfigProblem } from '@offsetsync/contracts';
import type { OffsetSyncConfig } from './schema.js';

/** Each named file that cannot be read, as a problem at its config path. */
export function unreadableFileProblems(config: OffsetSyncConfig): ConfigProblem[] {
  const files: [string, string | undefined][] = [];
  for (const [alias, cluster] of Object.entries(config.clusters)) {
    files.push([`clusters.${alias}.sasl.passwordFile`, cluster.sasl?.passwordFile]);
    for (const field of ['caFile', 'certFile', 'keyFile'] as const) {
      files.push([`clusters.${alias}.tls.${field}`, cluster.tls?.[field]]);
    }
  }
  const { nats } = config;
  for (const field of ['passwordFile', 'tokenFile', 'nkeySeedFile', 'credsFile'] as const) {
    files.push([`nats.${field}`, nats[field]]);
  }
  for (const field of ['caFile', 'certFile', 'keyFile'] as const) {
    files.push([`nats.tls.${field}`, nats.tls?.[field]]);
  }
  const tls = config.health?.grpc.tls;
  for (const field of ['certFile', 'keyFile', 'caFile'] as const) {
    files.push([`health.grpc.tls.${field}`, tls?.[field]]);
  }
  return files.flatMap(([path, file]) => {
    if (file === undefined) return [];
    try {
      accessSync(file, constants.R_OK);
      return [];
    } catch (e: unknown) {
      const reason = e instanceof Error ? e.message : String(e);
      return [{ path, message: `cannot read ${file}: ${reason}` }];
    }
  });
}
