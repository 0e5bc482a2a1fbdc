// Groups the target refused because they have live members. Their events are reported as skipped
// without asking the broker again until the configured wait has passed, so an application running on
// the target costs one refused commit per wait period, not one per source commit.

export class ActiveGroups {
  private readonly refusedAtMs = new Map<string, number>();

  constructor(private readonly retryAfterMs: number) {}

  /** Notes a refusal at `nowMs`. */
  refused(group: string, nowMs: number): void {
    this.refusedAtMs.set(group, nowMs);
    // Forget refusals that have run out, so groups that come and go do not accumulate.
    if (this.refusedAtMs.size > 1_000) {
      for (const [name, at] of this.refusedAtMs)
        if (at + this.retryAfterMs <= nowMs) this.refusedAtMs.delete(name);
    }
  }

  /** When the group may be tried again, while it is still waiting; undefined when it may be tried now. */
  waitingUntil(group: string, nowMs: number): number | undefined {
    const at = this.refusedAtMs.get(group);
    if (at === undefined) return undefined;
    const until = at + this.retryAfterMs;
    if (until > nowMs) return until;
    this.refusedAtMs.delete(group);
    return undefined;
  }
}
