// The health service's worker: intake (the streams, replayed at start and then followed), lifecycle and
// heartbeats. Each message goes through the steps of health-events.ts (read it into an event) and
// health-state.ts (fold it in); on a short tick every link is correlated (link-correlation.ts, through
// HealthState) and published (link-view.ts). The gRPC API (health-api.ts) answers from the state and the
// link view.
import type { Server } from '@grpc/grpc-js';
import { Events, type JsMsg } from 'nats';
import { ErrorCodes, OffsetSyncError, Progress } from '@offsetsync/contracts';
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
import { createHealthGrpcServer } from './health-api.js';
import { readHealthEvent, type HealthStream } from './health-events.js';
import { registerHealthMetrics } from './health-metrics.js';
import { HealthState } from './health-state.js';
import { HEALTH_API_SERVICE_NAME } from './link-names.js';
import { LinkView } from './link-view.js';

/** How often links are re-evaluated: a quarter heartbeat interval, within 50..250 ms. */
function evaluationTickMs(heartbeatIntervalMs: number): number {
  return Math.min(250, Math.max(50, Math.floor(heartbeatIntervalMs / 4)));
}

/** The heartbeat problem area of reading one stream. */
const readArea = (stream: HealthStream) => `read ${stream} stream`;

/** The health service's worker; see the file comment for its steps. */
export class HealthWorker implements ServiceWorker {
  readonly state: HealthState;
  readonly board = new HealthStatusBoard();
  readonly links: LinkView;
  readonly heartbeat: HeartbeatState;
  private readonly settings: HealthConfig;
  private readonly openStreams = new Set<() => void>();
  private readonly feed: EventFeed;
  private readonly problems = new ProblemBoard();
  private server: Server | undefined;
  private timer: NodeJS.Timeout | undefined;
  private reloadTimer: NodeJS.Timeout | undefined;
  private forgetTimer: NodeJS.Timeout | undefined;
  /** The links of the config last loaded, as JSON: a reload that finds the same changes nothing. */
  private configuredLinks: string;
  /** The message of the last failed reload, logged once until it changes. */
  private reloadFailure: string | undefined;
  private eventsSeen = 0;
  private lastEventAtMs = 0;
  private boundPort: number | undefined;

  constructor(
    private readonly context: ServiceContext,
    private readonly clock: () => number = Date.now,
  ) {
    this.settings = context.config.health ?? OffsetSyncConfigSchema.parse({ health: {} }).health!;
    this.state = new HealthState(context.config.links, this.settings, clock);
    this.configuredLinks = JSON.stringify(context.config.links);
    this.links = new LinkView(this.board, context.logger);
    this.feed = new EventFeed({
      js: context.nats.jetstream(),
      names: context.names,
      onMessage: (stream, message) => this.take(stream, message),
      onFailure: (stream, error) => this.streamFailed(stream, error),
      onRecovery: (stream) => this.streamRecovered(stream),
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
    registerHealthMetrics(context.telemetry.meter, {
      links: () => this.links.links(),
      ready: () => this.server !== undefined,
      instances: () => this.state.instanceRecords(),
      hearing: () => this.state.hearing(),
      knownLinks: () => this.state.knownLinks(),
      oldestPendingTranslationSinceMs: (link) => this.state.oldestPendingTranslationSinceMs(link),
      thresholds: this.settings,
      clock: this.clock,
    });
    // Until the streams are replayed nothing is known: every name the API answers for is NOT_SERVING.
    this.board.set('', ServingStatus.NOT_SERVING);
    this.board.set(HEALTH_API_SERVICE_NAME, ServingStatus.NOT_SERVING);
  }

  /** The port the gRPC API listens on, once started. */
  get port(): number | undefined {
    return this.boundPort;
  }

  async start(): Promise<void> {
    void this.followConnection();
    const jsm = await this.context.nats.jetstreamManager();
    await this.feed.start(jsm);
    this.evaluate();
    const grpc = this.settings.grpc;
    const links = this.links;
    this.server = createHealthGrpcServer(
      this.board,
      {
        state: this.state,
        links: () => links.links(),
        onLinkChange: (listener) => links.onLinkChange(listener),
      },
      this.openStreams,
      { reflection: grpc.reflection },
    );
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
    const reload = this.context.reloadConfig;
    if (reload !== undefined && this.settings.configReloadIntervalMs > 0) {
      this.reloadTimer = setInterval(() => this.reloadLinks(reload), this.settings.configReloadIntervalMs);
      this.reloadTimer.unref();
    }
    // A sweep walks every group: often enough that a deleted group goes within a tenth of its window
    // after it, at most once a minute.
    this.forgetTimer = setInterval(
      () => this.forgetDeleted(),
      Math.min(60_000, Math.max(1_000, this.settings.forgetDeletedGroupAfterMs / 10)),
    );
    this.forgetTimer.unref();
    this.board.set(HEALTH_API_SERVICE_NAME, ServingStatus.SERVING);
    this.evaluate();
  }

  /** Forgets the groups deleted on the source longer ago than the setting (see HealthState.forgetDeleted). */
  forgetDeleted(): void {
    const forgotten = this.state.forgetDeleted(this.clock());
    if (forgotten > 0) this.context.logger.info({ groups: forgotten }, 'forgot groups deleted on the source');
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.reloadTimer);
    clearInterval(this.forgetTimer);
    this.timer = undefined;
    this.board.notServingAll();
    for (const end of [...this.openStreams]) end();
    if (this.server !== undefined) await shutdownServer(this.server);
    await this.feed.stop();
  }

  /**
   * Reads the config again and takes its links when they changed: a link removed there is from then on
   * reported only while its instances run. A config that no longer loads changes nothing; it is logged
   * once and reported in heartbeats until a reload works.
   */
  reloadLinks(reload: () => { links: Parameters<HealthState['configure']>[0] }): void {
    const area = 'reload config';
    let links;
    try {
      links = reload().links;
    } catch (error: unknown) {
      const message = error instanceof Error ? error.message : String(error);
      if (message !== this.reloadFailure)
        this.context.logger.warn({ err: error }, 'could not read the config again; keeping the links it had');
      this.reloadFailure = message;
      this.problems.fail(area, error);
      return;
    }
    this.reloadFailure = undefined;
    this.problems.recover(area);
    const text = JSON.stringify(links);
    if (text === this.configuredLinks) return;
    this.configuredLinks = text;
    this.state.configure(links);
    this.context.logger.info(
      { links: links.map((l) => `${l.source} -> ${l.target}`) },
      'links taken from the reloaded config',
    );
    this.evaluate();
  }

  /**
   * Re-evaluates every link and publishes the result. The overall name `""` follows the links only once
   * the API is up: before, nothing is known yet.
   */
  evaluate(): void {
    const now = this.clock();
    const allServing = this.links.publish(this.state.linkStatuses(now), now);
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

  /** A stream that cannot be read: logged, and reported in the heartbeats until it is read again. */
  /** Follows health's own NATS connection: while it is down, health hears no heartbeat. */
  private async followConnection(): Promise<void> {
    for await (const status of this.context.nats.status()) {
      if (status.type === Events.Disconnect) this.state.lostHearing(this.clock());
      else if (status.type === Events.Reconnect) this.state.regainedHearing(this.clock());
    }
  }

  private streamFailed(stream: HealthStream, error: unknown): void {
    if (stream === 'heartbeats') this.state.lostHearing(this.clock());
    this.context.logger.error({ err: error, kind: stream }, 'reading a stream failed; trying again');
    this.problems.fail(
      readArea(stream),
      new OffsetSyncError(`reading the ${stream} stream failed`, {
        code: ErrorCodes.NATS_UNREACHABLE,
        cause: error,
      }),
    );
  }

  private streamRecovered(stream: HealthStream): void {
    if (stream === 'heartbeats') this.state.regainedHearing(this.clock());
    this.context.logger.info({ kind: stream }, 'reading the stream again');
    this.problems.recover(readArea(stream));
  }
}
