// The learned offset delta (target offset minus source offset) of each partition of each link, from the
// last exact translation. Replication keeps order, so the delta stays valid until a gap (a transaction
// marker, an aborted batch, a duplicate) shifts it; the locator checks every guess by fingerprint anyway.
export class DeltaMemory {
  private readonly deltas = new Map<string, number>();

  private static key(source: string, target: string, topic: string, partition: number): string {
    return `${source}\u0000${target}\u0000${topic}\u0000${partition}`;
  }

  get(source: string, target: string, topic: string, partition: number): number | undefined {
    return this.deltas.get(DeltaMemory.key(source, target, topic, partition));
  }

  learn(
    source: string,
    target: string,
    topic: string,
    partition: number,
    sourceOffset: number,
    targetOffset: number,
  ): void {
    this.deltas.set(DeltaMemory.key(source, target, topic, partition), targetOffset - sourceOffset);
  }
}
