// Binding and stopping a @grpc/grpc-js server, with optional TLS, the way every offsetsync gRPC
// endpoint (the probe port of each service, the health API) does it.
import { readFileSync } from 'node:fs';
import type { Server } from '@grpc/grpc-js';
import { ServerCredentials } from '@grpc/grpc-js';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';

/** TLS of a gRPC server: PEM files; with `caFile`, clients must present a certificate signed by it. */
export interface GrpcServerTls {
  certFile: string;
  keyFile: string;
  caFile?: string | undefined;
}

/** Server credentials from the TLS settings, or plaintext without them. Unreadable files are a config error. */
export function serverCredentials(tls: GrpcServerTls | undefined): ServerCredentials {
  if (tls === undefined) return ServerCredentials.createInsecure();
  const read = (file: string, what: string): Buffer => {
    try {
      return readFileSync(file);
    } catch (error: unknown) {
      throw new OffsetSyncError(`cannot read the gRPC TLS ${what} ${file}`, {
        code: ErrorCodes.CONFIG_INVALID,
        cause: error,
      });
    }
  };
  const ca = tls.caFile === undefined ? null : read(tls.caFile, 'CA file');
  return ServerCredentials.createSsl(
    ca,
    [{ cert_chain: read(tls.certFile, 'certificate'), private_key: read(tls.keyFile, 'key') }],
    ca !== null,
  );
}

/** Binds `server` to host:port (0 = a free port) and resolves to the port bound. */
export function bindServer(
  server: Server,
  host: string,
  port: number,
  credentials: ServerCredentials,
): Promise<number> {
  const address = host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
  return new Promise((resolve, reject) => {
    server.bindAsync(address, credentials, (error, bound) => {
      if (error) {
        reject(
          new OffsetSyncError(`cannot serve gRPC on ${address}: ${error.message}`, {
            code: ErrorCodes.LIFECYCLE,
            cause: error,
            details: { host, port },
          }),
        );
        return;
      }
      resolve(bound);
    });
  });
}

/** Stops accepting calls, lets running ones finish for up to `graceMs`, then cancels the rest. */
export function shutdownServer(server: Server, graceMs = 2_000): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    timer.unref();
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
