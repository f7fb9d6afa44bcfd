import type { Clock } from './clock';

/**
 * Tells a periodic lease check that its own process was stalled (SIGSTOP, a paused VM, a blocked
 * event loop). While it was, nothing read the holders' beats or heartbeats and no lease was
 * extended, so the leases that ran out meanwhile say nothing of their holders, whose beats wait
 * in pipes and sockets. A check that runs more than half a lease after it was due has seen a stall
 * (a lease renewed every third of a lease can only run out unrenewed through a longer one); leases
 * are judged again one lease after it, once the waiting beats have renewed them.
 *
 * A step of the wall clock forward (an NTP correction, a VM whose clock is set on resume) looks
 * the same to the leases, which are instants of the wall clock: they all seem run out at once, so
 * it holds judgement too; {@link steppedMs} tells the two apart for the log, on the monotonic clock.
 */
export class StallWatch {
  private dueAt = Infinity;
  private monoDueAt = Infinity;
  private seenAt = -Infinity;
  private stepped = 0;

  /**
   * @param clock the scheduler's clock (a check's lateness is read on it)
   * @param leaseMs the lease the check judges (ms)
   */
  constructor(
    private readonly clock: Pick<Clock, 'now' | 'monotonic'>,
    private readonly leaseMs: number,
  ) {}

  /** The check was armed to run `everyMs` (ms) from now. */
  armed(everyMs: number): void {
    this.dueAt = this.clock.now() + everyMs;
    this.monoDueAt = this.clock.monotonic() + everyMs;
  }

  /**
   * Called as the check runs: records a stall when it runs more than half a lease late.
   * @returns how late it runs (ms) when that is a stall, else 0
   */
  lateness(): number {
    const now = this.clock.now();
    const late = now - this.dueAt;
    this.stepped = 0;
    if (late <= this.leaseMs / 2) return 0;
    this.seenAt = now;
    this.stepped = Math.max(0, late - Math.max(0, this.clock.monotonic() - this.monoDueAt));
    return late;
  }

  /**
   * Of the lateness the last {@link lateness} reported, how much (ms) was the wall clock stepping
   * forward rather than this process standing still (0 when none, or no stall was reported).
   */
  steppedMs(): number {
    return this.stepped;
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

  /**
   * The warning line of a stall `late` ms long that {@link lateness} just reported, for leases of
   * `what`: a step of the wall clock is called one, not a stall of this process.
   */
  warning(what: string): string {
    return this.stepped > 0
      ? `the wall clock stepped forward by about ${Math.round(this.stepped / 1000)} s (not a stall of this process): ${what} leases are judged again one lease from now`
      : `this process was stalled: ${what} leases are judged again one lease from now`;
  }

  /** True within one lease of the last stall seen: no lease may be judged. */
  holding(): boolean {
    return this.clock.now() - this.seenAt < this.leaseMs;
  }
}
