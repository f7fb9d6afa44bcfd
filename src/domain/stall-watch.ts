import type { Clock } from './clock';

/**
 * Tells a periodic lease check that its own process was stalled (SIGSTOP, a paused VM, a blocked
 * event loop). While it was, nothing read the holders' beats or heartbeats and no lease was
 * extended, so the leases that ran out meanwhile say nothing of their holders, whose beats wait
 * in pipes and sockets. A check that runs more than half a lease after it was due has seen a stall
 * (a lease renewed every third of a lease can only run out unrenewed through a longer one); leases
 * are judged again one lease after it, once the waiting beats have renewed them.
 */
export class StallWatch {
  private dueAt = Infinity;
  private seenAt = -Infinity;

  /**
   * @param clock the scheduler's clock (a check's lateness is read on it)
   * @param leaseMs the lease the check judges (ms)
   */
  constructor(
    private readonly clock: Pick<Clock, 'now'>,
    private readonly leaseMs: number,
  ) {}

  /** The check was armed to run `everyMs` (ms) from now. */
  armed(everyMs: number): void {
    this.dueAt = this.clock.now() + everyMs;
  }

  /**
   * Called as the check runs: records a stall when it runs more than half a lease late.
   * @returns how late it runs (ms) when that is a stall, else 0
   */
  lateness(): number {
    const now = this.clock.now();
    const late = now - this.dueAt;
    if (late <= this.leaseMs / 2) return 0;
    this.seenAt = now;
    return late;
  }

  /**
   * Holds judgement for one lease from now, as after a stall: at a start, the holders could not
   * renew their leases while the process was down, and their beats come only now.
   */
  holdFromNow(): void {
    this.seenAt = this.clock.now();
  }

  /**
   * The instant (epoch ms, on the clock) of the last stall seen or {@link holdFromNow}; -Infinity
   * when there was none. A check judging leases longer than `leaseMs` holds each of them for its
   * own length from here.
   */
  heldSince(): number {
    return this.seenAt;
  }

  /** True within one lease of the last stall seen: no lease may be judged. */
  holding(): boolean {
    return this.clock.now() - this.seenAt < this.leaseMs;
  }
}
