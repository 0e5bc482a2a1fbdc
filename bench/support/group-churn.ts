// Which consumer groups exist as the health benchmark's groups come and go: rounds that delete a share of
// the live groups, picked at random, and add as many new ones under names never used before (as
// short-lived groups with generated names do). Pure: the random source is an argument.

/** One round of churn: the groups deleted and the groups added, by index. */
export interface ChurnRound {
  deleted: number[];
  added: number[];
}

/** The live groups, by index; new groups get the next unused index. */
export class GroupPopulation {
  private readonly liveGroups: number[];
  private nextIndex: number;

  /** Groups 0 to `initial` - 1 live. */
  constructor(initial: number) {
    this.liveGroups = Array.from({ length: initial }, (_, i) => i);
    this.nextIndex = initial;
  }

  get live(): readonly number[] {
    return this.liveGroups;
  }

  /** How many group indexes were ever used: the live ones and the deleted ones. */
  get everUsed(): number {
    return this.nextIndex;
  }

  /** A live group picked by `random` (values in [0, 1)). */
  pick(random: () => number): number {
    if (this.liveGroups.length === 0) throw new RangeError('no live group to pick');
    return this.liveGroups[Math.floor(random() * this.liveGroups.length)]!;
  }

  /**
   * Deletes round(`fraction` x live) distinct live groups picked by `random` and adds as many new ones,
   * so the number of live groups stays the same.
   */
  churn(fraction: number, random: () => number): ChurnRound {
    if (!(fraction >= 0 && fraction <= 1)) throw new RangeError(`fraction must be in [0, 1]: ${fraction}`);
    const count = Math.round(fraction * this.liveGroups.length);
    const deleted: number[] = [];
    // A partial Fisher-Yates shuffle: each pick moves to the end and leaves the live list.
    for (let i = 0; i < count; i++) {
      const last = this.liveGroups.length - 1;
      const at = Math.floor(random() * (last + 1));
      const group = this.liveGroups[at]!;
      this.liveGroups[at] = this.liveGroups[last]!;
      this.liveGroups.pop();
      deleted.push(group);
    }
    const added = Array.from({ length: count }, () => this.nextIndex++);
    this.liveGroups.push(...added);
    return { deleted, added };
  }
}
