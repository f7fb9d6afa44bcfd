/**
 * The one source of time for the scheduler. Every component receives a Clock instead of calling
 * `Date.now()` or the global timers, so every timing rule can be tested with {@link ManualClock}
 * without sleeping (XState's `SimulatedClock`, Akka's `ManualTime`).
 */
export interface Clock {
  /** Current time in epoch milliseconds. May go backwards (NTP step, manual clock). */
  now(): number;
  /**
   * Milliseconds from an arbitrary origin that never go backwards and do not follow steps of the
   * wall clock (`performance.now()`): for how long something has run (a handler's timeout), where a
   * step of {@link now} (an NTP correction, a VM resumed) must not kill or spare an attempt.
   */
  monotonic(): number;
  /** Runs `fn` once after `delayMs` milliseconds (negative delays count as 0). */
  setTimeout(fn: () => void, delayMs: number): TimerHandle;
  /** Cancels a timer made by this clock; unknown or fired handles are ignored. */
  clearTimeout(handle: TimerHandle): void;
}

/** Opaque timer handle returned by {@link Clock.setTimeout}. */
export type TimerHandle = { readonly __timer: unique symbol } | object;

/** Wall-clock time and Node's timers. */
export class SystemClock implements Clock {
  now(): number {
    return Date.now();
  }

  monotonic(): number {
    return performance.now();
  }

  setTimeout(fn: () => void, delayMs: number): TimerHandle {
    return setTimeout(fn, Math.max(0, delayMs));
  }

  clearTimeout(handle: TimerHandle): void {
    clearTimeout(handle as NodeJS.Timeout);
  }
}

interface ManualTimer {
  id: number;
  at: number;
  fn: () => void;
}

/**
 * A clock that moves only when told to. Timers fire during {@link advance} / {@link set} in due
 * order; setting the time backwards fires nothing (timers keep their absolute due time).
 */
export class ManualClock implements Clock {
  private current: number;
  /** {@link monotonic}: moved by time passing (advance, set forward, stall), never by a step. */
  private elapsed = 0;
  private nextId = 1;
  private timers: ManualTimer[] = [];

  /** @param startMs initial time in epoch milliseconds */
  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  monotonic(): number {
    return this.elapsed;
  }

  /**
   * Steps the wall clock by `ms` (either way) with no time passing, as an NTP step or a changed
   * system time does: {@link now} moves, {@link monotonic} does not, and the timers keep the delay
   * they had left (Node's timers run on the monotonic clock), so none fires now. Unlike
   * {@link set} backwards, whose timers keep their due time on the wall clock.
   */
  step(ms: number): void {
    this.current += ms;
    for (const t of this.timers) t.at += ms;
  }

  setTimeout(fn: () => void, delayMs: number): TimerHandle {
    const timer = { id: this.nextId++, at: this.current + Math.max(0, delayMs), fn };
    this.timers.push(timer);
    return { id: timer.id };
  }

  clearTimeout(handle: TimerHandle): void {
    const id = (handle as { id?: number }).id;
    this.timers = this.timers.filter((t) => t.id !== id);
  }

  /** Moves time forward by `ms` milliseconds, firing due timers in order. */
  advance(ms: number): void {
    this.set(this.current + ms);
  }

  /**
   * Moves time forward by `ms` milliseconds without firing a timer, as for a process that was
   * stopped (SIGSTOP, a paused VM): the next {@link advance} fires the overdue timers, late, each
   * seeing the time after the stall.
   */
  stall(ms: number): void {
    this.current += Math.max(0, ms);
    this.elapsed += Math.max(0, ms);
  }

  /** Sets the time to `ms` (epoch milliseconds); earlier than now is allowed (clock going back). */
  set(ms: number): void {
    if (ms < this.current) {
      this.current = ms;
      return;
    }
    for (;;) {
      const due = this.timers.filter((t) => t.at <= ms).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      const at = Math.max(this.current, due.at);
      this.elapsed += at - this.current;
      this.current = at;
      due.fn();
    }
    this.elapsed += Math.max(0, ms - this.current);
    this.current = ms;
  }

  /** Number of timers not yet fired (for leak checks in tests). */
  pendingTimers(): number {
    return this.timers.length;
  }
}
