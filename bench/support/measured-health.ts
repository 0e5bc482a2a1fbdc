// The real health service (services/health/dist/main.js) as the health benchmark runs it: its config,
// its process started through the benchmarks' service starter with its resident memory sampled from
// /proc, the time until its API says SERVING (it serves only once it has replayed the streams), and its
// `--trace-gc` lines read back from its log.
import { setTimeout as sleep } from 'node:timers/promises';
import { HealthCheckResponse_ServingStatus as ServingStatus } from '@offsetsync/contracts';
import type { Cleanup, ServiceProcess } from '@offsetsync/harness';
import { startBenchService } from './bench-service.js';
import { parseGcTrace, type GcEvent } from './gc-trace.js';
import { HealthApiClient } from './health-api-client.js';
import { cpuSeconds, RssSampler } from './process-stats.js';

/** The gRPC health name of health's own API: SERVING once the streams are replayed. */
export const HEALTH_API_SERVICE = 'offsetsync.v1.OffsetSyncHealth';

/** Where health reads from, which link it reports, and its settings under test. */
export interface HealthSetup {
  natsUrl: string;
  subjectPrefix: string;
  source: string;
  target: string;
  grpcPort: number;
  instanceId: string;
  /** Health's own heartbeat interval. */
  heartbeatIntervalMs: number;
  /** `health.forgetDeletedGroupAfterMs`; health's default when undefined. */
  forgetDeletedGroupAfterMs?: number;
}

/**
 * The health service's config (its YAML input form): the link configured, as a deployment has it. Health
 * never connects to Kafka, but a link names clusters, so both have an address nobody listens on.
 */
export function healthConfig(setup: HealthSetup): Record<string, unknown> {
  const unused = { bootstrapServers: ['127.0.0.1:9'] };
  return {
    instance: { id: setup.instanceId },
    clusters: { [setup.source]: unused, [setup.target]: unused },
    links: [{ source: setup.source, target: setup.target }],
    nats: { servers: [setup.natsUrl], subjectPrefix: setup.subjectPrefix },
    health: {
      grpc: { host: '127.0.0.1', port: setup.grpcPort },
      ...(setup.forgetDeletedGroupAfterMs === undefined
        ? {}
        : { forgetDeletedGroupAfterMs: setup.forgetDeletedGroupAfterMs }),
    },
    heartbeat: { intervalMs: setup.heartbeatIntervalMs },
    telemetry: { prometheus: { enabled: false } },
    probes: { port: 0 },
    logging: { level: 'info' },
  };
}

const MB = 1024 * 1024;
/** How often resident memory is sampled for the peak. */
const RSS_SAMPLE_MS = 100;
/** How often the API is asked whether it serves yet. */
const CHECK_EVERY_MS = 100;

/** One health process under measurement. */
export class MeasuredHealth {
  readonly client: HealthApiClient;
  private readonly rss: RssSampler;

  private constructor(
    private readonly service: ServiceProcess,
    /** When the process was spawned (epoch ms). */
    readonly spawnedAtMs: number,
    grpcPort: number,
    apiDeadlineMs: number,
  ) {
    this.rss = new RssSampler(service.pid);
    this.rss.start(RSS_SAMPLE_MS);
    this.client = new HealthApiClient(`127.0.0.1:${grpcPort}`, apiDeadlineMs);
  }

  /** Starts health with `setup`; `gcTrace` adds `--trace-gc`. Stopped by `cleanup` at the latest. */
  static async start(
    setup: HealthSetup,
    options: { gcTrace: boolean; apiDeadlineMs: number; cleanup: Cleanup },
  ): Promise<MeasuredHealth> {
    const spawnedAtMs = Date.now();
    const service = await startBenchService('health', healthConfig(setup), {
      nodeArgs: options.gcTrace ? ['--trace-gc'] : [],
    });
    const health = new MeasuredHealth(service, spawnedAtMs, setup.grpcPort, options.apiDeadlineMs);
    options.cleanup.push(`stop health ${service.pid}`, () => health.stop());
    return health;
  }

  get pid(): number {
    return this.service.pid;
  }

  /** Milliseconds since the process was spawned. */
  sinceSpawnMs(): number {
    return Date.now() - this.spawnedAtMs;
  }

  /** Resident memory now, MB (a fresh sample, also counted for the peak). */
  rssMb(): number {
    return this.rss.sample() / MB;
  }

  /** The highest resident memory sampled so far, MB. */
  rssPeakMb(): number {
    return this.rss.peakBytes / MB;
  }

  /** CPU seconds (user + system) the process has used so far. */
  cpuSeconds(): number {
    return cpuSeconds(this.service.pid) ?? Number.NaN;
  }

  /**
   * Resolves with the milliseconds from the spawn until health's API answered SERVING: it binds its port
   * only after the replay. Rejects when the process exits first or `timeoutMs` passes.
   */
  async untilServing(timeoutMs: number): Promise<number> {
    const deadline = this.spawnedAtMs + timeoutMs;
    for (;;) {
      if (!this.service.running()) throw new Error(`health exited during its start; see ${this.service.logFile}`);
      if (Date.now() > deadline) throw new Error(`health did not serve within ${timeoutMs} ms`);
      try {
        const { value } = await this.client.check(HEALTH_API_SERVICE, 1_000);
        if (value === ServingStatus.SERVING) return this.sinceSpawnMs();
      } catch {
        // The port is not open yet: health is still replaying.
      }
      await sleep(CHECK_EVERY_MS);
    }
  }

  /** The collections `--trace-gc` logged so far (none without it). */
  async gcEvents(): Promise<GcEvent[]> {
    return parseGcTrace(await this.service.log());
  }

  /** Where its config and log are. */
  get dir(): string {
    return this.service.dir;
  }

  /** SIGTERM, and the exit code; runs once. */
  async stop(): Promise<number | null> {
    this.rss.stop();
    this.client.close();
    return this.service.stop();
  }
}
