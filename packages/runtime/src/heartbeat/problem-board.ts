// The problems a service instance has right now, by code, for its heartbeats: set while a failure lasts,
// cleared when the thing works again; `sinceMs` keeps the start of the outage.
import type { OffsetSyncError } from '@offsetsync/contracts';
import type { Problem } from '@offsetsync/contracts';

export class ProblemBoard {
  private readonly problems = new Map<string, Problem>();

  constructor(private readonly clock: () => number = Date.now) {}

  /** Records `error` under `code`, or clears `code` when `error` is undefined. */
  set(code: string, error: OffsetSyncError | undefined): void {
    if (error === undefined) {
      this.problems.delete(code);
      return;
    }
    const detail = error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message;
    this.problems.set(code, { code, detail, sinceMs: this.problems.get(code)?.sinceMs ?? this.clock() });
  }

  list(): Problem[] {
    return [...this.problems.values()];
  }
}
