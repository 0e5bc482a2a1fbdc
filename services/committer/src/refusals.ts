// Where the committer tells that it refused an event it must never apply: a translation for another link
// than the one its subject and consumer serve, or a target offset outside the target partition's log.
// Such an event comes from a broken or hostile publisher, so one is worth a warning and a heartbeat
// problem, and a flood of them must flood neither: per kind, one log line per interval (the next one
// says how many were left out), and one problem that stays on the heartbeat for a hold period after the
// last refusal, so that a single refused event is still seen by health, however quickly valid events
// follow it.
import type { OffsetSyncError } from '@offsetsync/contracts';
import type { Logger } from '@offsetsync/runtime';
import type { ProblemReporter } from './pipeline/work-item.js';

/** What the committer refuses, each with its own log budget and heartbeat area. */
export type RefusalKind = 'foreign_link' | 'subject_mismatch' | 'out_of_log_bounds';

/** The heartbeat area of each kind: a problem of one is cleared a hold period after its last refusal. */
export const RefusalAreas: Readonly<Record<RefusalKind, string>> = {
  foreign_link: 'refuse translations of other links',
  subject_mismatch: 'refuse translations on another key subject',
  out_of_log_bounds: 'refuse offsets outside the target log',
};

const MESSAGES: Readonly<Record<RefusalKind, string>> = {
  foreign_link: 'refused a translated event for a link this committer does not serve; not committed',
  subject_mismatch: "refused a translated event whose subject is not its key's; not committed",
  out_of_log_bounds: 'refused to commit a target offset outside the target partition log',
};

/** What the refusals reporter needs. */
export interface RefusalsOptions {
  logger: Logger;
  problems?: ProblemReporter | undefined;
  clock: () => number;
  /** Least time between two log lines of one kind. Default: `60000` (1 minute). */
  logIntervalMs?: number;
  /** How long a kind's problem stays on the heartbeat after its last refusal. Default: `600000` (10 minutes). */
  holdMs?: number;
}

interface KindState {
  lastLoggedAtMs: number;
  lastRefusedAtMs: number;
  /** Refusals since the last log line that had none of their own. */
  leftOut: number;
}

/** Logs (rate-limited) and files the refusals of one committer instance. */
export class Refusals {
  private readonly states = new Map<RefusalKind, KindState>();
  private readonly logIntervalMs: number;
  private readonly holdMs: number;

  constructor(private readonly options: RefusalsOptions) {
    this.logIntervalMs = options.logIntervalMs ?? 60_000;
    this.holdMs = options.holdMs ?? 600_000;
  }

  /**
   * Records one refusal of `kind`: files `error` as the kind's heartbeat problem, and logs it with
   * `fields` (the subject and what disagreed) unless the kind already logged within the interval.
   */
  refused(kind: RefusalKind, error: OffsetSyncError, fields: Record<string, unknown>): void {
    const now = this.options.clock();
    this.options.problems?.fail(RefusalAreas[kind], error);
    const state = this.states.get(kind);
    if (state !== undefined && now - state.lastLoggedAtMs < this.logIntervalMs) {
      state.lastRefusedAtMs = now;
      state.leftOut++;
      return;
    }
    this.options.logger.warn(
      {
        kind,
        code: error.code,
        ...fields,
        ...(state === undefined || state.leftOut === 0 ? {} : { leftOutOfLog: state.leftOut }),
      },
      `${MESSAGES[kind]} (at most one line per ${this.logIntervalMs} ms per kind; all counted)`,
    );
    this.states.set(kind, { lastLoggedAtMs: now, lastRefusedAtMs: now, leftOut: 0 });
  }

  /** Clears the problem of every kind whose last refusal is older than the hold period. */
  sweep(): void {
    const now = this.options.clock();
    for (const [kind, state] of this.states) {
      if (now - state.lastRefusedAtMs < this.holdMs) continue;
      this.options.problems?.recover(RefusalAreas[kind]);
      if (state.leftOut > 0) {
        this.options.logger.warn(
          { kind, leftOutOfLog: state.leftOut },
          `${MESSAGES[kind]}: refusals left out of the log since its last line`,
        );
      }
      // Forgotten, so the next refusal of the kind after a quiet spell is logged at once.
      this.states.delete(kind);
    }
  }
}
