/**
 * The partitions this process holds a lease on, with their epochs (fencing tokens), as the
 * ownership component last decided. Partition owners and the dispatcher read it before every
 * store write that needs a token, so a partition the component gives up or loses stops being
 * fired and claimed at once, before its owner actor has even been stopped. One per scheduler
 * instance (cluster mode only; null in the embedded profile).
 */
export class PartitionFences {
  private readonly epochs = new Map<number, number>();
  /** Partitions this process gave away by hand-over (not lost), with the epoch it gave up. */
  private readonly handedOver = new Map<number, number>();

  /** Records the lease epoch now held for `partition`. */
  grant(partition: number, epoch: number): void {
    this.epochs.set(partition, epoch);
    this.handedOver.delete(partition);
  }

  /**
   * Forgets `partition`: nothing more of it is fired or claimed. `handedOver` (a planned release:
   * to the member rendezvous now names, or at a graceful stop; not a loss) keeps its epoch for
   * `mayStart`.
   */
  revoke(partition: number, handedOver = false): void {
    const epoch = this.epochs.get(partition);
    this.epochs.delete(partition);
    if (handedOver && epoch !== undefined) this.handedOver.set(partition, epoch);
    else this.handedOver.delete(partition);
  }

  /**
   * Whether an attempt this process claimed in `partition` with `epoch` (any epoch when omitted)
   * may still start: the epoch is held, or was given up by plan (a hand-over, or a graceful stop,
   * whose drain then runs the attempts claimed before it: dropping them charged each a
   * `worker_lost` attempt). A claim the store granted
   * was written before the new owner's fence (the fence raises `owner_epoch` past the claim's
   * token and the claim is a compare-and-set on it), the new owner never loads RUNNING tasks, and
   * completions and lease extensions are compare-and-sets on the attempt, not the epoch: so the
   * attempt runs once, here. Dropping it instead left its task RUNNING until its attempt lease
   * (`leaseMs`, 30 s by default) ran out and then ran it again (load-tests/README.md, issue 32).
   * A member whose lease was lost or expired starts nothing of that partition (docs/CLUSTER.md).
   */
  mayStart(partition: number, epoch?: number): boolean {
    const held = this.epochs.get(partition) ?? this.handedOver.get(partition);
    return held !== undefined && (epoch === undefined || held === epoch);
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
