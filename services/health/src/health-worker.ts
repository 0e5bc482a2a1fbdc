// The health service's worker: intake (the streams, replayed at start and then followed), lifecycle and
// heartbeats. Each message goes through the steps of health-events.ts (read it into an event) and
// health-state.ts (fold it in); on a short tick every link is correlated (link-correlation.ts, through
// HealthState) and published to grpc.health.v1 and WatchLinks. The gRPC API (health-api.ts) answers
// from the state and the published links.
import type { Server } from '@grpc/grpc-js';
import type { JsMsg } from 'nats';
import { ErrorCodes, OffsetSyncError, Progress, type LinkStatus } from '@offsetsync/contracts';
import {
  bindServer,
  HealthStatusBoard,
  OffsetSyncConfigSchema,
  ProblemBoard,
  serverCredentials,
  ServingStatus,
  shutdownServer,
  type HealthConfig,
  type HeartbeatState,
  type ServiceContext,
  type ServiceWorker,
} from '@offsetsync/runtime';
import { EventFeed } from './event-feed.js';
import { createHealthGrpcServer, type HealthView } from './health-api.js';
import { readHealthEvent, type HealthStream } from './health-events.js';
import { HealthState } from './health-state.js';
import { HEALTH_API_SERVICE_NAME, linkIsServing, linkServiceName } from './link-names.js';

/** How often links are re-evaluated: a quarter heartbeat interval, within 50..250 ms. */
export function evaluationTickMs(heartbeatIntervalMs: number): number {
  return Math.min(250, Math.max(50, Math.floor(heartbeatIntervalMs / 4)));
}

/** The heartbeat problem area of reading one stream. */
const readArea = (stream: HealthStream) => `read ${stream} stream`;

/** The health service's worker; see the file comment for its steps. */
export class HealthWorker implements ServiceWorker, HealthView {
  readonly state: HealthState;
  readonly board = new HealthStatusBoard();
  readonly heartbeat: HeartbeatState;
  private readonly current = new Map<string, { status: LinkStatus; alive: string }>();
  private readonly listeners = new Set<(status: LinkStatus) => void>();
  private readonly settings: HealthConfig;
  private readonly openStreams = new Set<() => void>();
  private readonly feed: EventFeed;
  private readonly problems = new ProblemBoard();
  private server: Server | undefined;
  private timer: NodeJS.Timeout | undefined;
  private eventsSeen = 0;
  private lastEventAtMs = 0;
  private boundPort: number | undefined;

  constructor(
    private readonly context: ServiceContext,
    private readonly clock: () => number = Date.now,
  ) {
    this.settings = context.config.health ?? OffsetSyncConfigSchema.parse({ health: {} }).health!;
    this.state = new HealthState(context.config.links, this.settings);
    this.feed = new EventFeed({
      js: context.nats.jetstream(),
      names: context.names,
      onMessage: (stream, message) => this.take(stream, message),
      onFailure: (stream, error) => this.streamFailed(stream, error),
    });
    this.heartbeat = {
      progress: () =>
        Progress.fromPartial({
          eventsByOutcome: { read: this.eventsSeen },
          pending: 0,
          lastEventAtMs: this.lastEventAtMs,
        }),
      problems: () => this.problems.list(),
    };
    // Until the streams are replayed nothing is known: every name the API answers for is NOT_SERVING.
    this.board.set('', ServingStatus.NOT_SERVING);
    this.board.set(HEALTH_API_SERVICE_NAME, ServingStatus.NOT_SERVING);
  }

  /** The port the gRPC API listens on, once started. */
  get port(): number | undefined {
    return this.boundPort;
  }

  async start(): Promise<void> {
    const jsm = await this.context.nats.jetstreamManager();
    await this.feed.start(jsm);
    this.evaluate();
    const grpc = this.settings.grpc;
    this.server = createHealthGrpcServer(this.board, this, this.openStreams);
    this.boundPort = await bindServer(this.server, grpc.host, grpc.port, serverCredentials(grpc.tls));
    this.context.logger.info(
      { host: grpc.host, port: this.boundPort, tls: grpc.tls !== undefined },
      'health gRPC API served',
    );
    this.timer = setInterval(
      () => this.evaluate(),
      evaluationTickMs(this.context.config.heartbeat.intervalMs),
    );
    this.timer.unref();
    this.board.set(HEALTH_API_SERVICE_NAME, ServingStatus.SERVING);
    this.evaluate();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    this.board.notServingAll();
    for (const end of [...this.openStreams]) end();
    if (this.server !== undefined) await shutdownServer(this.server);
    await this.feed.stop();
  }

  links(): LinkStatus[] {
    return [...this.current.values()].map((c) => c.status);
  }

  onLinkChange(listener: (status: LinkStatus) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Re-evaluates every link; notifies watchers of each state change (or change of running instances). */
  evaluate(): void {
    const now = this.clock();
    let allServing = true;
    for (const { link, status } of this.state.linkStatuses(now)) {
      const key = linkServiceName(link.source, link.target);
      const previous = this.current.get(key);
      const alive = status.instances
        .map((i) => `${i.role}/${i.instanceId}`)
        .sort()
        .join(',');
      const changed = previous === undefined || previous.status.state !== status.state;
      status.changedAtMs = changed ? now : previous.status.changedAtMs;
      this.current.set(key, { status, alive });
      const serving = linkIsServing(status.state);
      allServing &&= serving;
      this.board.set(key, serving ? ServingStatus.SERVING : ServingStatus.NOT_SERVING);
      if (changed || previous.alive !== alive) {
        if (changed)
          this.context.logger.info(
            { link: key, state: status.state, reason: status.reason },
            'link state changed',
          );
        for (const listener of this.listeners) listener(status);
      }
    }
    if (this.server !== undefined)
      this.board.set('', allServing ? ServingStatus.SERVING : ServingStatus.NOT_SERVING);
  }

  /** Intake of one message: read it into an event and fold that into the state. */
  private take(stream: HealthStream, message: JsMsg): void {
    const reading = readHealthEvent(stream, message);
    if (!reading.ok) {
      // A message health cannot read is skipped; the stream keeps it for the services that own it. Types
      // health does not take (a newer build's, during an upgrade) are skipped without a word.
      if (reading.reason === 'UNDECODABLE')
        this.context.logger.warn(
          { subject: message.subject, type: reading.type, detail: reading.detail },
          'undecodable event ignored',
        );
      return;
    }
    this.state.apply(reading.event);
    this.eventsSeen += 1;
    this.lastEventAtMs = this.clock();
  }

  /** A stream that cannot be read any more: logged, and reported in the heartbeats until a restart. */
  private streamFailed(stream: HealthStream, error: unknown): void {
    this.context.logger.error({ err: error, kind: stream }, 'reading a stream failed');
    this.problems.fail(
      readArea(stream),
      new OffsetSyncError(`reading the ${stream} stream failed`, {
        code: ErrorCodes.NATS_UNREACHABLE,
        cause: error,
      }),
    );
  }
}
