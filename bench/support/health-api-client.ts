// The health service's gRPC API as the health benchmark calls it: grpc.health.v1 Check, ListLinks,
// GetGroup and ListGroups, each a promise, with how long the call took.
import { performance } from 'node:perf_hooks';
import { credentials, Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import {
  GetGroupRequest,
  HealthClient,
  ListGroupsRequest,
  ListLinksRequest,
  OffsetSyncHealthClient,
  type GroupStatus,
  type HealthCheckResponse_ServingStatus,
  type ListGroupsResponse,
  type ListLinksResponse,
} from '@offsetsync/contracts';

/** An answer and the milliseconds from the call until it arrived. */
export interface Timed<T> {
  value: T;
  ms: number;
}

/**
 * Channel options: until health has replayed the streams its port is closed, and grpc-js would back off
 * up to two minutes between connection attempts; the benchmark wants to see the port open at once.
 */
const CHANNEL_OPTIONS = {
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 200,
  // A ListGroups page of 1,000 groups with many partitions each is larger than the default 4 MB.
  'grpc.max_receive_message_length': 64 * 1024 * 1024,
};

function timed<T>(call: (done: (error: ServiceError | null, value?: T) => void) => void): Promise<Timed<T>> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    call((error, value) => {
      if (error !== null) reject(error);
      else resolve({ value: value as T, ms: performance.now() - started });
    });
  });
}

/** Whether `error` is the gRPC error NOT_FOUND. */
export function isNotFound(error: unknown): boolean {
  return (error as Partial<ServiceError> | undefined)?.code === GrpcStatus.NOT_FOUND;
}

/** Clients of one health service address (plaintext); close them with {@link close}. */
export class HealthApiClient {
  private readonly health: HealthClient;
  private readonly api: OffsetSyncHealthClient;

  constructor(
    address: string,
    private readonly deadlineMs: number,
  ) {
    this.health = new HealthClient(address, credentials.createInsecure(), CHANNEL_OPTIONS);
    this.api = new OffsetSyncHealthClient(address, credentials.createInsecure(), CHANNEL_OPTIONS);
  }

  private options(deadlineMs = this.deadlineMs) {
    return { deadline: Date.now() + deadlineMs };
  }

  /** The serving status of `service`; rejects while the server is not up. */
  check(service: string, deadlineMs: number): Promise<Timed<HealthCheckResponse_ServingStatus>> {
    return timed<HealthCheckResponse_ServingStatus>((done) =>
      this.health.check({ service }, new Metadata(), this.options(deadlineMs), (error, r) =>
        done(error, r?.status),
      ),
    );
  }

  listLinks(): Promise<Timed<ListLinksResponse>> {
    return timed((done) =>
      this.api.listLinks(ListLinksRequest.fromPartial({}), new Metadata(), this.options(), done),
    );
  }

  getGroup(source: string, target: string, group: string): Promise<Timed<GroupStatus>> {
    return timed((done) =>
      this.api.getGroup(
        GetGroupRequest.fromPartial({ sourceCluster: source, targetCluster: target, group }),
        new Metadata(),
        this.options(),
        done,
      ),
    );
  }

  /** One page of every group on every link; `pageToken` empty for the first. */
  listGroups(pageSize: number, pageToken: string): Promise<Timed<ListGroupsResponse>> {
    return timed((done) =>
      this.api.listGroups(
        ListGroupsRequest.fromPartial({ pageSize, pageToken }),
        new Metadata(),
        this.options(),
        done,
      ),
    );
  }

  close(): void {
    this.health.close();
    this.api.close();
  }
}
