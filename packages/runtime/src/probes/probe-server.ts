// The probe port of every offsetsync process: grpc.health.v1 Check and Watch about the process itself,
// for Kubernetes liveness and readiness probes (grpc probes) and grpc_health_probe. Service "" is
// NOT_SERVING while the process starts, SERVING once it runs, and NOT_SERVING again while it stops.
import { Server } from '@grpc/grpc-js';
import { HealthService } from '@offsetsync/contracts';
import { bindServer, serverCredentials, shutdownServer } from './grpc-server.js';
import { HealthStatusBoard, healthServer, ServingStatus } from './health-status-board.js';

/** A running probe server. */
export class ProbeServer {
  readonly board = new HealthStatusBoard();
  private readonly server = new Server();
  private readonly openWatches = new Set<() => void>();
  private stopping: Promise<void> | undefined;
  private boundPort = 0;

  private constructor() {}

  /** The port the probe server listens on. */
  get port(): number {
    return this.boundPort;
  }

  /** Starts serving on host:port (0 = a free port), with "" NOT_SERVING until {@link serving}. */
  static async start(host: string, port: number): Promise<ProbeServer> {
    const probe = new ProbeServer();
    probe.board.set('', ServingStatus.NOT_SERVING);
    probe.server.addService(HealthService, healthServer(probe.board, probe.openWatches));
    probe.boundPort = await bindServer(probe.server, host, port, serverCredentials(undefined));
    return probe;
  }

  serving(): void {
    this.board.set('', ServingStatus.SERVING);
  }

  notServing(): void {
    this.board.notServingAll();
  }

  /** Reports NOT_SERVING, ends open Watch streams and closes the port. Runs once. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.notServing();
      for (const end of [...this.openWatches]) end();
      await shutdownServer(this.server);
    })();
    return this.stopping;
  }
}
