import type { Clock, TimerHandle } from '../../domain/clock';

/** Longest timer delay Node accepts (2^31 − 1 ms, about 24.8 days); a later wake is re-armed. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * One wake-up at the earliest instant asked for: the dispatcher's pump when the only work left
 * waits behind an empty token bucket or a future release (no polling). Asking for a later instant
 * than the one armed changes nothing; an earlier one re-arms. A delay past Node's timer bound
 * fires at the bound, and the pump it runs asks again.
 */
export class ReleaseTimer {
  private timer: TimerHandle | null = null;
  private at = Infinity;

  /**
   * @param clock the injected clock (its timers, its `now`)
   * @param fire called once per armed instant, after the timer is cleared (it may arm again)
   */
  constructor(
    private readonly clock: Clock,
    private readonly fire: () => void,
  ) {}

  /** Wakes at `at` (epoch ms) unless an earlier wake is armed; `null`: nothing to wait for. */
  arm(at: number | null): void {
    if (at === null || at >= this.at) return;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.at = at;
    this.timer = this.clock.setTimeout(
      () => {
        this.timer = null;
        this.at = Infinity;
        this.fire();
      },
      Math.min(MAX_TIMER_MS, Math.max(0, at - this.clock.now())),
    );
  }

  /** Cancels the armed wake, if any. */
  stop(): void {
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.at = Infinity;
  }
}
