import type { Clock, TimerHandle } from './clock';

/**
 * Longest a {@link WallWake} sleeps before it looks at the wall clock again (ms). Timers run on the
 * monotonic clock: after a step of the wall clock back (an NTP correction of a clock that ran
 * fast, then corrected again) a timer armed for "due time − now" slept on for the whole step, so
 * due tasks and crons started up to that long late, and after a step forward it woke only when its
 * old delay was over.
 */
export const WALL_RECHECK_MS = 1000;

/** The delay of a timer for the wall-clock instant `at` (ms since epoch), seen at `now`: at most {@link WALL_RECHECK_MS}. */
export function wallTimerDelay(at: number, now: number): number {
  return Math.min(WALL_RECHECK_MS, Math.max(0, at - now));
}

/**
 * One wake-up of a pass that waits for an instant of the wall clock (a partition owner's next due
 * task, the cron evaluator's next fire time): `fire` runs at that instant, or at the latest
 * {@link WALL_RECHECK_MS} after it was armed, when the pass looks at the clock again and arms
 * anew. Arming the instant already armed changes nothing; any other replaces it.
 */
export class WallWake {
  private timer: TimerHandle | null = null;
  private at = Infinity;

  /**
   * @param clock the injected clock (its timers and `now`)
   * @param fire called once per wake, after the timer is cleared (it may arm again)
   */
  constructor(
    private readonly clock: Pick<Clock, 'now' | 'setTimeout' | 'clearTimeout'>,
    private readonly fire: () => void,
  ) {}

  /** Wakes at `at` (epoch ms), or sooner to look again (see {@link WALL_RECHECK_MS}). */
  arm(at: number): void {
    if (at === this.at) return;
    this.clear();
    this.at = at;
    this.timer = this.clock.setTimeout(
      () => {
        this.timer = null;
        this.at = Infinity;
        this.fire();
      },
      wallTimerDelay(at, this.clock.now()),
    );
  }

  /** Cancels the armed wake, if any. */
  clear(): void {
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.at = Infinity;
  }
}
