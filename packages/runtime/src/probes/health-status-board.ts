// The standard grpc.health.v1 service (Check and Watch) over a board of named statuses. The probe
// server of every service process and the health service's link statuses both publish through one.
import {
  status as GrpcStatus,
  type ServerWritableStream,
  type sendUnaryData,
  type ServerUnaryCall,
} from '@grpc/grpc-js';
import {
  HealthCheckResponse_ServingStatus as ServingStatus,
  type HealthCheckRequest,
  type HealthCheckResponse,
  type HealthServer,
} from '@offsetsync/contracts';

export { ServingStatus };

type Listener = (service: string, status: ServingStatus) => void;

/**
 * Named serving statuses ("" is the server as a whole). Setting a status that did not change notifies
 * nobody, so every Watch stream sees each transition once.
 */
export class HealthStatusBoard {
  private readonly statuses = new Map<string, ServingStatus>();
  private readonly listeners = new Set<Listener>();

  /** The status of `service`, or undefined when the name is not registered. */
  get(service: string): ServingStatus | undefined {
    return this.statuses.get(service);
  }

  /** Every registered service name with its status. */
  entries(): [string, ServingStatus][] {
    return [...this.statuses.entries()];
  }

  set(service: string, status: ServingStatus): void {
    if (this.statuses.get(service) === status) return;
    this.statuses.set(service, status);
    for (const listener of this.listeners) listener(service, status);
  }

  /** Forgets a service name; watchers see SERVICE_UNKNOWN. */
  remove(service: string): void {
    if (!this.statuses.delete(service)) return;
    for (const listener of this.listeners) listener(service, ServingStatus.SERVICE_UNKNOWN);
  }

  /** Sets every registered service to NOT_SERVING, as a server does while it shuts down. */
  notServingAll(): void {
    for (const service of [...this.statuses.keys()]) this.set(service, ServingStatus.NOT_SERVING);
  }

  /** Calls `listener` on every change until the returned function is called. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/**
 * The grpc.health.v1.Health implementation: Check answers NOT_FOUND for an unknown name (as the protocol
 * prescribes), Watch sends SERVICE_UNKNOWN for it and keeps the stream open, since the name may appear.
 * `onWatch` lets the owner end open Watch streams when the server stops.
 */
export function healthServer(board: HealthStatusBoard, openWatches?: Set<() => void>): HealthServer {
  return {
    check(
      call: ServerUnaryCall<HealthCheckRequest, HealthCheckResponse>,
      callback: sendUnaryData<HealthCheckResponse>,
    ) {
      const status = board.get(call.request.service);
      if (status === undefined) {
        callback({
          code: GrpcStatus.NOT_FOUND,
          details: `unknown service ${JSON.stringify(call.request.service)}`,
        });
        return;
      }
      callback(null, { status });
    },
    watch(call: ServerWritableStream<HealthCheckRequest, HealthCheckResponse>) {
      const service = call.request.service;
      let last: ServingStatus | undefined;
      const send = (status: ServingStatus) => {
        if (status === last) return;
        last = status;
        call.write({ status });
      };
      const unsubscribe = board.subscribe((name, status) => {
        if (name === service) send(status);
      });
      const end = () => {
        unsubscribe();
        openWatches?.delete(end);
        if (!call.writableEnded) call.end();
      };
      openWatches?.add(end);
      call.on('cancelled', end);
      call.on('close', () => {
        unsubscribe();
        openWatches?.delete(end);
      });
      send(board.get(service) ?? ServingStatus.SERVICE_UNKNOWN);
    },
  };
}
