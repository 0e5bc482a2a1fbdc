import type { Logger } from 'pino';
import { ErrorCodes, OffsetSyncError } from '@offsetsync/contracts';

/** Where a service is in its life. */
export type LifecycleState = 'idle' | 'starting' | 'running' | 'stopping' | 'stopped' | 'failed';

/** Options of {@link ServiceLifecycle}. */
export interface ServiceLifecycleOptions {
  /** Service name, for logs. */
  name: string;
  logger: Logger;
  /** Acquires resources and starts intake. Called at most once. */
  start: () => Promise<void>;
  /**
   * Stops intake, finishes in-flight work, flushes and releases resources, telemetry last. Called at most
   * once, also after a failed start (so it must cope with a partial start). `reason` says why (for
   * example the signal name).
   */
  stop: (reason: string) => Promise<void>;
  /** How long `stop` may take before {@link ServiceLifecycle.stop} gives up and rejects. Default: 10000 ms. */
  graceMs?: number;
}

/** A listener of state changes. */
export type StateChangeListener = (state: LifecycleState, previous: LifecycleState) => void;

/** What {@link ServiceLifecycle.installSignalHandlers} listens on; `process` by default. */
export interface SignalSource {
  on(event: 'SIGTERM' | 'SIGINT', listener: () => void): unknown;
  off(event: 'SIGTERM' | 'SIGINT', listener: () => void): unknown;
}

/** Options of {@link ServiceLifecycle.installSignalHandlers} and {@link runService}. */
export interface SignalHandlerOptions {
  /** Signal source. Default: the real `process`. */
  process?: SignalSource;
  /** Ends the process. Default: `process.exit`. Called at most once. */
  exit?: (code: number) => void;
}

const HANDLED_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/**
 * Explicit start/stop states of a service: `idle -> starting -> running -> stopping -> stopped`, with
 * `failed` when start or stop fails. `start()` and `stop()` each run their function once and hand every
 * caller the same promise.
 */
export class ServiceLifecycle {
  /** Service name, for logs. */
  readonly name: string;
  /** The logger lifecycle events go to. */
  readonly logger: Logger;
  private readonly startFn: () => Promise<void>;
  private readonly stopFn: (reason: string) => Promise<void>;
  private readonly graceMs: number;
  private currentState: LifecycleState = 'idle';
  private readonly listeners = new Set<StateChangeListener>();
  private startPromise: Promise<void> | undefined;
  private stopPromise: Promise<void> | undefined;

  constructor(options: ServiceLifecycleOptions) {
    this.name = options.name;
    this.logger = options.logger;
    this.startFn = options.start;
    this.stopFn = options.stop;
    this.graceMs = options.graceMs ?? 10_000;
  }

  /** The current state. */
  get state(): LifecycleState {
    return this.currentState;
  }

  /** Calls `listener` on every state change until the returned function is called. */
  onStateChange(listener: StateChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Starts the service: runs the start function once (later calls get the same promise). On failure the
   * state becomes `failed` and the error is rethrown; it is not logged here, the caller handles it.
   * Rejects with LIFECYCLE when `stop()` came first.
   */
  start(): Promise<void> {
    this.startPromise ??= this.runStart();
    return this.startPromise;
  }

  private async runStart(): Promise<void> {
    if (this.currentState !== 'idle') {
      throw new OffsetSyncError(`${this.name} cannot start: it is ${this.currentState}`, {
        code: ErrorCodes.LIFECYCLE,
      });
    }
    this.transition('starting');
    try {
      await this.startFn();
    } catch (e: unknown) {
      // A stop requested meanwhile owns the state from here on.
      if (this.stillIn('starting')) this.transition('failed');
      throw e;
    }
    if (this.stillIn('starting')) this.transition('running');
  }

  /**
   * Stops the service: runs the stop function once; every caller, concurrent or later, gets the same
   * promise. A stop during start waits for start to settle first. Rejects with LIFECYCLE when it takes
   * longer than the grace period (the stop function is then abandoned, not cancelled), or with the stop
   * function's error; the state is then `failed`. Stopping a service never started resolves at once
   * without calling the stop function.
   */
  stop(reason = 'requested'): Promise<void> {
    this.stopPromise ??= this.runStop(reason);
    return this.stopPromise;
  }

  private async runStop(reason: string): Promise<void> {
    if (this.currentState === 'idle') {
      this.transition('stopped');
      return;
    }
    const previous = this.currentState;
    this.transition('stopping');
    const work = (async () => {
      if (previous === 'starting') await this.startPromise?.catch(() => undefined);
      await this.stopFn(reason);
    })();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(
          new OffsetSyncError(`${this.name} did not stop within ${this.graceMs} ms`, {
            code: ErrorCodes.LIFECYCLE,
            details: { graceMs: this.graceMs, reason },
          }),
        );
      }, this.graceMs);
    });
    try {
      await Promise.race([work, deadline]);
      this.transition('stopped');
    } catch (e: unknown) {
      this.transition('failed');
      throw e;
    } finally {
      clearTimeout(timer);
      // After a timeout the stop function may still fail; its error has nowhere to go but must not surface
      // as an unhandled rejection.
      void work.catch(() => undefined);
    }
  }

  /**
   * On SIGTERM or SIGINT: logs once, calls `stop(signal)`, and exits 0 when it resolves, 1 when it fails or
   * the grace period elapses. A second signal exits 1 at once. Returns a function that removes the
   * handlers.
   */
  installSignalHandlers(options: SignalHandlerOptions = {}): () => void {
    const source: SignalSource = options.process ?? process;
    const exit = onlyOnce(options.exit ?? ((code: number) => process.exit(code)));
    let received: string | undefined;
    const handlers = HANDLED_SIGNALS.map((signal) => {
      const handler = () => {
        if (received !== undefined) {
          this.logger.warn({ signal, first: received }, `${signal} during shutdown, exiting now`);
          exit(1);
          return;
        }
        received = signal;
        this.logger.info({ signal }, `${signal} received, stopping ${this.name}`);
        void this.stop(signal).then(
          () => exit(0),
          (e: unknown) => {
            this.logger.error({ err: e }, `${this.name} did not stop cleanly`);
            exit(1);
          },
        );
      };
      source.on(signal, handler);
      return { signal, handler };
    });
    return () => {
      for (const { signal, handler } of handlers) source.off(signal, handler);
    };
  }

  /** State check that TypeScript does not narrow away across awaits. */
  private stillIn(state: LifecycleState): boolean {
    return this.currentState === state;
  }

  private transition(next: LifecycleState): void {
    const previous = this.currentState;
    if (previous === next) return;
    this.currentState = next;
    this.logger.info({ state: next, previous }, `${this.name} ${next}`);
    for (const listener of [...this.listeners]) {
      try {
        listener(next, previous);
      } catch (e: unknown) {
        this.logger.error({ err: e }, 'lifecycle state listener failed');
      }
    }
  }
}

/**
 * Runs a service from `main`: installs the signal handlers, then starts it. When start fails, logs the
 * error once, runs stop to release what was acquired, and exits 1. Resolves once the service runs, or once
 * the failure is handled.
 */
export async function runService(
  lifecycle: ServiceLifecycle,
  options: SignalHandlerOptions = {},
): Promise<void> {
  const exit = onlyOnce(options.exit ?? ((code: number) => process.exit(code)));
  lifecycle.installSignalHandlers({ ...options, exit });
  try {
    await lifecycle.start();
  } catch (e: unknown) {
    lifecycle.logger.error({ err: e }, `${lifecycle.name} failed to start`);
    await lifecycle.stop('start failed').catch((stopError: unknown) => {
      lifecycle.logger.warn(
        { err: stopError },
        `${lifecycle.name} cleanup after the failed start did not complete`,
      );
    });
    exit(1);
  }
}

function onlyOnce(exit: (code: number) => void): (code: number) => void {
  let called = false;
  return (code) => {
    if (called) return;
    called = true;
    exit(code);
  };
}
