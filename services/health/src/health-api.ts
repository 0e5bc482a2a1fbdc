// The gRPC surface of the health service: grpc.health.v1 (overall "", the API itself, one name per
// link), offsetsync.v1.OffsetSyncHealth, and server reflection for grpcurl. Thin: answers come from the
// worker's current view; validation errors map to gRPC status codes.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Server, status as GrpcStatus, type ServerWritableStream, type sendUnaryData } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import {
  ErrorCodes,
  HealthService,
  isOffsetSyncError,
  ListGroupsResponse,
  ListLinksResponse,
  OffsetSyncError,
  OffsetSyncHealthService,
  PartitionSyncState,
  type GetGroupRequest,
  type GroupStatus,
  type LinkStatus,
  type ListGroupsRequest,
  type OffsetSyncHealthServer,
  type WatchLinksRequest,
} from '@offsetsync/contracts';
import { healthServer, type HealthStatusBoard } from '@offsetsync/runtime';
import type { HealthState } from './health-state.js';
import { worstState } from './link-names.js';
import { LinkStatusStream } from './link-status-stream.js';
import { decodePageToken, encodePageToken, type PageFilters } from './page-token.js';

/** Default and largest page sizes of ListGroups. */
const DEFAULT_PAGE_SIZE = 100;
const MAX_PAGE_SIZE = 1000;

/** What the API reads from the worker. */
export interface HealthView {
  readonly state: HealthState;
  /** The current status of every known link, by source then target. */
  links(): LinkStatus[];
  /** Calls `listener` with each link status that changed, until the returned function is called. */
  onLinkChange(listener: (status: LinkStatus) => void): () => void;
}

function fail(callback: sendUnaryData<never>, code: GrpcStatus, details: string): void {
  callback({ code, details }, null);
}

/** The OffsetSyncHealth implementation over a view. `openStreams` collects ends of open WatchLinks streams. */
function offsetSyncHealthServer(view: HealthView, openStreams: Set<() => void>): OffsetSyncHealthServer {
  return {
    listLinks(_call, callback) {
      const links = view.links();
      callback(
        null,
        ListLinksResponse.fromPartial({ links, overallState: worstState(links.map((l) => l.state)) }),
      );
    },
    watchLinks(call: ServerWritableStream<WatchLinksRequest, LinkStatus>) {
      const { sourceCluster, targetCluster } = call.request;
      const matches = (s: LinkStatus) =>
        (sourceCluster === '' || s.sourceCluster === sourceCluster) &&
        (targetCluster === '' || s.targetCluster === targetCluster);
      const stream = new LinkStatusStream(call);
      const unsubscribe = view.onLinkChange((s) => {
        if (matches(s)) stream.send(s);
      });
      const end = () => {
        unsubscribe();
        openStreams.delete(end);
        if (!call.writableEnded) call.end();
      };
      openStreams.add(end);
      call.on('cancelled', end);
      call.on('close', () => {
        unsubscribe();
        openStreams.delete(end);
      });
      for (const s of view.links()) if (matches(s)) stream.send(s);
    },
    getGroup(call, callback) {
      const r: GetGroupRequest = call.request;
      const missing = (['sourceCluster', 'targetCluster', 'group'] as const).filter((f) => r[f] === '');
      if (missing.length > 0) {
        fail(callback, GrpcStatus.INVALID_ARGUMENT, `required: ${missing.map(snake).join(', ')}`);
        return;
      }
      const group = view.state.groupStatus({ source: r.sourceCluster, target: r.targetCluster }, r.group);
      if (group === undefined) {
        fail(
          callback,
          GrpcStatus.NOT_FOUND,
          `group ${JSON.stringify(r.group)} has never been seen on ${r.sourceCluster} -> ${r.targetCluster}`,
        );
        return;
      }
      callback(null, group);
    },
    listGroups(call, callback) {
      try {
        callback(null, listGroups(view.state, call.request));
      } catch (error: unknown) {
        if (isOffsetSyncError(error) && error.code === ErrorCodes.DECODE_ERROR) {
          fail(callback, GrpcStatus.INVALID_ARGUMENT, error.message);
        } else if (isOffsetSyncError(error) && error.code === ErrorCodes.CONFIG_INVALID) {
          fail(callback, GrpcStatus.INVALID_ARGUMENT, error.message);
        } else {
          fail(callback, GrpcStatus.INTERNAL, error instanceof Error ? error.message : String(error));
        }
      }
    },
  };
}

const snake = (field: string) => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** ListGroups: validation, paging and filtering. Throws typed errors for bad requests. */
export function listGroups(state: HealthState, request: ListGroupsRequest): ListGroupsResponse {
  if (request.pageSize < 0 || request.pageSize > MAX_PAGE_SIZE) {
    throw new OffsetSyncError(`page_size must be 0 to ${MAX_PAGE_SIZE}, got ${request.pageSize}`, {
      code: ErrorCodes.CONFIG_INVALID,
      retryable: false,
    });
  }
  if (!Object.values(PartitionSyncState).includes(request.state) || (request.state as number) < 0) {
    throw new OffsetSyncError(`unknown state ${request.state}`, {
      code: ErrorCodes.CONFIG_INVALID,
      retryable: false,
    });
  }
  const size = request.pageSize === 0 ? DEFAULT_PAGE_SIZE : request.pageSize;
  const filters: PageFilters = {
    sourceCluster: request.sourceCluster,
    targetCluster: request.targetCluster,
    groupPrefix: request.groupPrefix,
    state: request.state,
  };
  const after = request.pageToken === '' ? undefined : decodePageToken(request.pageToken, filters);
  const found: GroupStatus[] = state.listGroups({ ...filters, state: request.state }, after, size + 1);
  const groups = found.slice(0, size);
  const last = groups.at(-1);
  const nextPageToken =
    found.length > size && last !== undefined
      ? encodePageToken(
          { source: last.sourceCluster, target: last.targetCluster, group: last.group },
          filters,
        )
      : '';
  return ListGroupsResponse.fromPartial({ groups, nextPageToken });
}

/** Where the .proto contracts are: the repository's proto/ (three levels above src/ and dist/). */
export function protoDirectory(): string {
  const dir = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'proto');
  if (!existsSync(join(dir, 'offsetsync', 'v1', 'health_service.proto'))) {
    throw new OffsetSyncError(`the .proto contracts for server reflection are missing in ${dir}`, {
      code: ErrorCodes.LIFECYCLE,
      retryable: false,
    });
  }
  return dir;
}

/**
 * A gRPC server with grpc.health.v1, OffsetSyncHealth and, unless `reflection` is false, server
 * reflection registered (not bound yet).
 */
export function createHealthGrpcServer(
  board: HealthStatusBoard,
  view: HealthView,
  openStreams: Set<() => void>,
  options: { reflection: boolean } = { reflection: true },
): Server {
  const server = new Server();
  server.addService(HealthService, healthServer(board, openStreams));
  server.addService(OffsetSyncHealthService, offsetSyncHealthServer(view, openStreams));
  if (!options.reflection) return server;
  const protoDir = protoDirectory();
  const definition = loadSync(
    ['offsetsync/v1/health_service.proto', 'offsetsync/v1/events.proto', 'grpc/health/v1/health.proto'],
    { includeDirs: [protoDir], keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true },
  );
  new ReflectionService(definition).addToServer(server);
  return server;
}
