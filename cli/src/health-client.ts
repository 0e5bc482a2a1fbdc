// A client of the health service's gRPC API, for the operator commands (`status`, `cutover`).
import { readFileSync } from 'node:fs';
import {
  credentials,
  type ChannelCredentials,
  Metadata,
  status as GrpcStatus,
  type ServiceError,
} from '@grpc/grpc-js';
import {
  GetGroupRequest,
  type GroupStatus,
  OffsetSyncHealthClient,
  type OffsetSyncConfig,
} from '@offsetsync/common';

/** Files for a TLS connection to the health service; all optional (the system roots verify the server). */
export interface HealthTlsFiles {
  caFile?: string | undefined;
  certFile?: string | undefined;
  keyFile?: string | undefined;
}

/** Where the health service listens according to a config: a wildcard bind address is reached on loopback. */
export function healthAddressFromConfig(config: OffsetSyncConfig): string | undefined {
  const grpc = config.health?.grpc;
  if (grpc === undefined) return undefined;
  const host = grpc.host === '0.0.0.0' || grpc.host === '::' ? '127.0.0.1' : grpc.host;
  return `${host.includes(':') ? `[${host}]` : host}:${grpc.port}`;
}

function channelCredentials(tls: HealthTlsFiles | undefined): ChannelCredentials {
  if (tls === undefined) return credentials.createInsecure();
  const read = (file: string | undefined) => (file === undefined ? null : readFileSync(file));
  return credentials.createSsl(read(tls.caFile), read(tls.keyFile), read(tls.certFile));
}

export function connectHealth(address: string, tls?: HealthTlsFiles): OffsetSyncHealthClient {
  return new OffsetSyncHealthClient(address, channelCredentials(tls));
}

/** One group on one link; undefined when the health service never saw it (NOT_FOUND). */
export function getGroup(
  client: OffsetSyncHealthClient,
  request: { sourceCluster: string; targetCluster: string; group: string },
  deadlineMs = 5_000,
): Promise<GroupStatus | undefined> {
  return new Promise((resolve, reject) => {
    client.getGroup(
      GetGroupRequest.fromPartial(request),
      new Metadata(),
      { deadline: Date.now() + deadlineMs },
      (error: ServiceError | null, response: GroupStatus) => {
        if (error === null) resolve(response);
        else if (error.code === GrpcStatus.NOT_FOUND) resolve(undefined);
        else reject(error);
      },
    );
  });
}
