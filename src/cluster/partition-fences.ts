/**
 * The partitions this process holds a lease on, with their epochs (fencing tokens), as the
 * ownership component last decided. Partition owners and the dispatcher read it before every
 * store write that needs a token, so a partition the component gives up or loses stops being
 * fired and claimed at once, before its owner actor has even been stopped. One per scheduler
 * instance (cluster mode only; null in the embedded profile).
 */
export class PartitionFences {
  private readonly epochs = new Map<number, number>();

  /** Records the lease epoch now held for `partition`. */
  grant(partition: number, epoch: number): void {
    this.epochs.set(partition, epoch);
  }

  /** Forgets `partition` (released, lost, expired). */
  revoke(partition: number): void {
    this.epochs.delete(partition);
  }

  /** The epoch held for `partition`, or undefined when it is not held. */
  epochOf(partition: number): number | undefined {
    return this.epochs.get(partition);
  }

  /** Fencing tokens for a claim: each partition's epoch, or -1 (never claims) when not held. */
  tokensFor(partitions: readonly number[]): number[] {
    return partitions.map((p) => this.epochs.get(p) ?? -1);
  }

  /** Held partitions, ascending. */
  held(): number[] {
    return [...this.epochs.keys()].sort((a, b) => a - b);
  }

  get size(): number {
    return this.epochs.size;
  }
}
