// A client of the health service's gRPC API for the operator commands (`status`, `cutover`): the
// connection they share, and promises around the generated callback client.
import { readFileSync } from 'node:fs';
import {
  credentials,
  Metadata,
  status as GrpcStatus,
  type ChannelCredentials,
  type ServiceError,
} from '@grpc/grpc-js';
import { GetGroupRequest, type GroupStatus, type OffsetSyncHealthClient } from '@offsetsync/contracts';
import { type OffsetSyncConfig } from '@offsetsync/runtime';
import { UsageError } from './command.js';
import { DEFAULT_HEALTH_ADDRESS, type HealthConnectionValues } from './health-connection-options.js';

export interface HealthConnection {
  address: string;
  credentials: ChannelCredentials;
}

/** Checks the connection options and reads the TLS files; every problem is a {@link UsageError}. */
export function healthConnection(
  values: HealthConnectionValues,
  fallbackAddress = DEFAULT_HEALTH_ADDRESS,
): HealthConnection {
  const address = values.address ?? fallbackAddress;
  if (!/^(\[[0-9A-Fa-f:.]+\]|[^\s:[\]]+):\d{1,5}$/.test(address)) {
    throw new UsageError(`--address must be host:port, got ${JSON.stringify(address)}`);
  }
  if ((values['cert-file'] === undefined) !== (values['key-file'] === undefined)) {
    throw new UsageError('--cert-file and --key-file go together');
  }
  const read = (file: string | undefined): Buffer | null => {
    if (file === undefined) return null;
    try {
      return readFileSync(file);
    } catch (error: unknown) {
      throw new UsageError(`cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  const useTls = values.tls === true || values['ca-file'] !== undefined || values['cert-file'] !== undefined;
  return {
    address,
    credentials: useTls
      ? credentials.createSsl(read(values['ca-file']), read(values['key-file']), read(values['cert-file']))
      : credentials.createInsecure(),
  };
}

/** Where the health service listens according to a config: a wildcard bind address is reached on loopback. */
export function healthAddressFromConfig(config: OffsetSyncConfig): string | undefined {
  const grpc = config.health?.grpc;
  if (grpc === undefined) return undefined;
  const host = grpc.host === '0.0.0.0' || grpc.host === '::' ? '127.0.0.1' : grpc.host;
  return `${host.includes(':') ? `[${host}]` : host}:${grpc.port}`;
}

/** One unary call of the generated client as a promise, with a deadline. */
export function unary<Req, Res>(
  call: (
    request: Req,
    metadata: Metadata,
    options: { deadline: number },
    callback: (e: ServiceError | null, r: Res) => void,
  ) => unknown,
  request: Req,
  timeoutMs: number,
): Promise<Res> {
  return new Promise((resolve, reject) => {
    call(request, new Metadata(), { deadline: Date.now() + timeoutMs }, (error, response) => {
      if (error) reject(error);
      else resolve(response);
    });
  });
}

/** One group on one link; undefined when the health service never saw it (NOT_FOUND). */
export async function getGroup(
  client: OffsetSyncHealthClient,
  request: { sourceCluster: string; targetCluster: string; group: string },
  timeoutMs = 5_000,
): Promise<GroupStatus | undefined> {
  try {
    return await unary(
      (r, m, o, cb) => client.getGroup(r, m, o, cb),
      GetGroupRequest.fromPartial(request),
      timeoutMs,
    );
  } catch (error: unknown) {
    if ((error as Partial<ServiceError>).code === GrpcStatus.NOT_FOUND) return undefined;
    throw error;
  }
}
