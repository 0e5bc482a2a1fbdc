// Every service instance announces itself on JetStream at a fixed interval, so the health service can
// tell which sides of a link run and whether they make progress.
import type { JetStreamClient } from 'nats';
import type { Logger } from 'pino';
import { Heartbeat, type Problem, type Progress, encodeEvent } from '@offsetsync/contracts';
import type { Names, ServiceRole } from '@offsetsync/contracts';

/** What a heartbeat says about the instance beyond its identity, read fresh at every beat. */
export interface HeartbeatState {
  progress(): Progress;
  problems(): Problem[];
}

export interface HeartbeatIdentity {
  role: ServiceRole;
  instanceId: string;
  sourceClusters: string[];
  targetCluster: string;
  /** A committer's sources whose links only observe (config `links[].mode`). */
  observedSourceClusters: string[];
  softwareVersion: string;
  startedAtMs: number;
  intervalMs: number;
}

/** Builds one heartbeat. Pure, so the contents are testable without NATS. */
function buildHeartbeat(identity: HeartbeatIdentity, state: HeartbeatState, nowMs: number): Heartbeat {
  return Heartbeat.fromPartial({
    ...identity,
    sentAtMs: nowMs,
    progress: state.progress(),
    problems: state.problems(),
  });
}

/**
 * Publishes a heartbeat at once and then every `intervalMs`. A failed publish is logged (once per
 * outage) and the next beat tries again; heartbeats never stop the service.
 */
export class HeartbeatPublisher {
  private timer: NodeJS.Timeout | undefined;
  private failing = false;
  private inFlight: Promise<void> | undefined;

  constructor(
    private readonly js: JetStreamClient,
    private readonly names: Names,
    private readonly identity: HeartbeatIdentity,
    private readonly state: HeartbeatState,
    private readonly logger: Logger,
    private readonly clock: () => number = Date.now,
  ) {}

  get subject(): string {
    return this.names.heartbeat(this.identity.role, this.identity.instanceId);
  }

  start(): void {
    if (this.timer) return;
    this.beat();
    this.timer = setInterval(() => this.beat(), this.identity.intervalMs);
    this.timer.unref();
  }

  /** Stops beating and waits for a beat in flight. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.inFlight;
  }

  private beat(): void {
    if (this.inFlight) return;
    const heartbeat = buildHeartbeat(this.identity, this.state, this.clock());
    const message = encodeEvent({ type: 'Heartbeat', event: heartbeat }, { subject: this.subject });
    this.inFlight = this.js
      .publish(message.subject, message.payload, { headers: message.headers })
      .then(() => {
        if (this.failing) this.logger.info('heartbeats delivered again');
        this.failing = false;
      })
      .catch((error: unknown) => {
        if (!this.failing)
          this.logger.warn({ err: error }, 'heartbeat could not be published; retrying every interval');
        this.failing = true;
      })
      .finally(() => {
        this.inFlight = undefined;
      });
  }
}
