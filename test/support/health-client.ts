// gRPC clients of the health service for tests: Check, Watch (recorded), ListLinks, GetGroup.
import {
  credentials,
  Metadata,
  type ChannelCredentials,
  type ClientReadableStream,
  type ServiceError,
} from '@grpc/grpc-js';
import { onTestFinished } from 'vitest';
import type { ServingStatus } from '@offsetsync/runtime';
import {
  GetGroupRequest,
  HealthClient,
  ListLinksRequest,
  OffsetSyncHealthClient,
  WatchLinksRequest,
  type GroupStatus,
  type HealthCheckResponse,
  type LinkStatus,
  type ListLinksResponse,
} from '@offsetsync/contracts';

/**
 * Clients of one health service address, closed when the current test finishes; plaintext unless
 * `channel` says otherwise (`credentials.createSsl(...)` for a server with TLS).
 */
export function healthClients(address: string, channel: ChannelCredentials = credentials.createInsecure()) {
  const health = new HealthClient(address, channel);
  const api = new OffsetSyncHealthClient(address, channel);
  onTestFinished(() => {
    health.close();
    api.close();
  });
  const deadline = () => ({ deadline: Date.now() + 5_000 });
  return {
    /** The serving status of `service`, or the gRPC error code when the call failed. */
    check(service: string): Promise<ServingStatus | { code: number }> {
      return new Promise((resolve) => {
        health.check(
          { service },
          new Metadata(),
          deadline(),
          (error: ServiceError | null, r: HealthCheckResponse) =>
            resolve(error ? { code: error.code } : r.status),
        );
      });
    },
    listLinks(): Promise<ListLinksResponse> {
      return new Promise((resolve, reject) => {
        api.listLinks(ListLinksRequest.fromPartial({}), new Metadata(), deadline(), (error, r) =>
          error ? reject(error) : resolve(r),
        );
      });
    },
    getGroup(source: string, target: string, group: string): Promise<GroupStatus> {
      return new Promise((resolve, reject) => {
        api.getGroup(
          GetGroupRequest.fromPartial({ sourceCluster: source, targetCluster: target, group }),
          new Metadata(),
          deadline(),
          (error, r) => (error ? reject(error) : resolve(r)),
        );
      });
    },
    /** Records every status Watch sends for `service`, with the time it arrived. */
    watch(service: string): {
      seen: { status: ServingStatus; atMs: number }[];
      stream: ClientReadableStream<HealthCheckResponse>;
    } {
      const seen: { status: ServingStatus; atMs: number }[] = [];
      const stream = health.watch({ service });
      stream.on('data', (r: HealthCheckResponse) => seen.push({ status: r.status, atMs: Date.now() }));
      stream.on('error', () => undefined);
      onTestFinished(() => stream.cancel());
      return { seen, stream };
    },
    /** Records every LinkStatus WatchLinks sends. */
    watchLinks(): { seen: LinkStatus[]; stream: ClientReadableStream<LinkStatus> } {
      const seen: LinkStatus[] = [];
      const stream = api.watchLinks(WatchLinksRequest.fromPartial({}));
      stream.on('data', (s: LinkStatus) => seen.push(s));
      stream.on('error', () => undefined);
      onTestFinished(() => stream.cancel());
      return { seen, stream };
    },
  };
}
