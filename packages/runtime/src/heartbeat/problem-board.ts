// The problems a service instance has right now, for its heartbeats. Each problem belongs to an area of
// the service's work (`kafka`, `nats`, `translate`, ...) and is keyed in the heartbeat by its error code:
// an area that fails again replaces its problem, and an area that works again clears it, whatever code it
// had. `sinceMs` keeps the start of the outage while the area keeps failing. A problem about one resource
// (a missing ACL on a topic, a refused login to one cluster) carries it, and problems of one code about
// different resources stay apart, so health names each missing ACL.
import { ErrorCodes, isOffsetSyncError, type Problem } from '@offsetsync/contracts';

interface AreaProblem {
  code: string;
  detail: string;
  sinceMs: number;
  resource: string;
}

export class ProblemBoard {
  private readonly areas = new Map<string, AreaProblem>();

  constructor(private readonly clock: () => number = Date.now) {}

  /**
   * Records that `area` failed with `error`: under the error's code (INTERNAL for an error offsetsync did
   * not classify). The outage started when the area first failed, whatever codes it went through.
   * Returns whether the problem is new: the area had none, or one of another code or resource. A caller
   * that retries often logs only new problems, so that one outage is one log line, not one per retry.
   */
  fail(area: string, error: unknown): boolean {
    const code = isOffsetSyncError(error) ? error.code : ErrorCodes.INTERNAL;
    const resource = resourceOf(error);
    const before = this.areas.get(area);
    this.areas.set(area, {
      code,
      detail: describe(error),
      sinceMs: before?.sinceMs ?? this.clock(),
      resource,
    });
    return before === undefined || before.code !== code || before.resource !== resource;
  }

  /** Records that `area` works again: its problem is gone. */
  recover(area: string): void {
    this.areas.delete(area);
  }

  /**
   * One problem per error code and resource; several areas failing with one code about one resource (or
   * none) are one problem, since the earliest.
   */
  list(): Problem[] {
    const byKey = new Map<string, Problem>();
    for (const problem of this.areas.values()) {
      const key = `${problem.code}\u0000${problem.resource}`;
      const seen = byKey.get(key);
      if (seen === undefined || problem.sinceMs < seen.sinceMs) byKey.set(key, { ...problem });
    }
    return [...byKey.values()];
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message;
}

/** `details.resource` of an offsetsync error (NOT_AUTHORIZED, AUTH_FAILED), else empty. */
function resourceOf(error: unknown): string {
  const resource = isOffsetSyncError(error) ? error.details?.resource : undefined;
  return typeof resource === 'string' ? resource : '';
}
