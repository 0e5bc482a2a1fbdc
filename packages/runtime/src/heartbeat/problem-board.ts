// The problems a service instance has right now, for its heartbeats. Each problem belongs to an area of
// the service's work (`kafka`, `nats`, `translate`, ...) and is keyed in the heartbeat by its error code:
// an area that fails again replaces its problem, and an area that works again clears it, whatever code it
// had. `sinceMs` keeps the start of the outage while the area keeps failing.
import { ErrorCodes, isOffsetSyncError, type Problem } from '@offsetsync/contracts';

interface AreaProblem {
  code: string;
  detail: string;
  sinceMs: number;
}

export class ProblemBoard {
  private readonly areas = new Map<string, AreaProblem>();

  constructor(private readonly clock: () => number = Date.now) {}

  /**
   * Records that `area` failed with `error`: under the error's code (INTERNAL for an error offsetsync did
   * not classify). The outage started when the area first failed, whatever codes it went through.
   */
  fail(area: string, error: unknown): void {
    const code = isOffsetSyncError(error) ? error.code : ErrorCodes.INTERNAL;
    this.areas.set(area, {
      code,
      detail: describe(error),
      sinceMs: this.areas.get(area)?.sinceMs ?? this.clock(),
    });
  }

  /** Records that `area` works again: its problem is gone. */
  recover(area: string): void {
    this.areas.delete(area);
  }

  /** One problem per error code; several areas failing with one code are one problem, since the earliest. */
  list(): Problem[] {
    const byCode = new Map<string, Problem>();
    for (const problem of this.areas.values()) {
      const seen = byCode.get(problem.code);
      if (seen === undefined || problem.sinceMs < seen.sinceMs) byCode.set(problem.code, { ...problem });
    }
    return [...byCode.values()];
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message;
}
