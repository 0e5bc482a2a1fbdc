// The real health service (services/health/dist/main.js) as the health benchmark runs it: its config,
// its process started through the benchmarks' service starter with its resident memory sampled from
// /proc, the time until its API says SERVING (it serves only once it has replayed the streams), and its
// `--trace-gc` lines read back from its log.
import { rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { HealthCheckResponse_ServingStatus as ServingStatus } from '@offsetsync/contracts';
import type { Cleanup, ServiceProcess } from '@offsetsync/harness';
import { startBenchService } from './bench-service.js';
import { parseGcTrace, type GcEvent } from './gc-trace.js';
import { HealthApiClient } from './health-api-client.js';
import { cpuSeconds, RssSampler } from './process-stats.js';

/** The gRPC health name of health's own API: SERVING once the streams are replayed. */
const HEALTH_API_SERVICE = 'offsetsync.v1.OffsetSyncHealth';

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

/** How a start of health ended: serving, or the process gone first. */
export type ServeOutcome =
  { served: true; ms: number } | { served: false; afterMs: number; exitCode: number | null; reason: string };

/**
 * Why a service process ended, from its log: the last error Node.js printed (an uncaught exception or
 * rejection) or the last error or fatal line the service logged. Pure.
 */
export function exitReason(log: string): string {
  const lines = log.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('['));
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!.trim();
    // `NatsError: TIMEOUT`, not the `chainedError: undefined` Node.js prints among the error's fields.
    if (/^[A-Z]\w*Error(:|$)/.test(line)) return line;
    if (!line.startsWith('{')) continue;
    let entry: { level?: unknown; msg?: unknown; err?: { message?: unknown } };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue;
    }
    if (entry.level === 'error' || entry.level === 'fatal') {
      const cause = typeof entry.err?.message === 'string' ? `: ${entry.err.message}` : '';
      return `${String(entry.msg)}${cause}`;
    }
  }
  return 'no error in its log';
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

  /**
   * Starts health with `setup`; `gcTrace` adds `--trace-gc`. Stopped by `cleanup` at the latest, which
   * then removes its config and log, or keeps them when the run failed.
   */
  static async start(
    setup: HealthSetup,
    options: { gcTrace: boolean; apiDeadlineMs: number; cleanup: Cleanup; say: (line: string) => void },
  ): Promise<MeasuredHealth> {
    const { cleanup, say } = options;
    const spawnedAtMs = Date.now();
    const service = await startBenchService('health', healthConfig(setup), {
      nodeArgs: options.gcTrace ? ['--trace-gc'] : [],
    });
    cleanup.push(`remove health's folder ${service.dir}`, async () => {
      if (cleanup.failed) say(`health config and log kept in ${service.dir}`);
      else await rm(service.dir, { recursive: true, force: true });
    });
    const health = new MeasuredHealth(service, spawnedAtMs, setup.grpcPort, options.apiDeadlineMs);
    cleanup.push(`stop health ${service.pid}`, () => health.stop());
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
   * Waits until health's API answers SERVING (it binds its port only after the replay): the
   * milliseconds since the spawn, or why the process exited first. Rejects after `timeoutMs`.
   */
  async untilServing(timeoutMs: number): Promise<ServeOutcome> {
    const deadline = this.spawnedAtMs + timeoutMs;
    for (;;) {
      if (!this.service.running())
        return {
          served: false,
          afterMs: this.sinceSpawnMs(),
          exitCode: await this.service.exited,
          reason: exitReason(await this.service.log()),
        };
      if (Date.now() > deadline) throw new Error(`health did not serve within ${timeoutMs} ms`);
      try {
        const { value } = await this.client.check(HEALTH_API_SERVICE, 1_000);
        if (value === ServingStatus.SERVING) return { served: true, ms: this.sinceSpawnMs() };
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

  /** SIGTERM, and the exit code; runs once. */
  async stop(): Promise<number | null> {
    this.rss.stop();
    this.client.close();
    return this.service.stop();
  }
}
