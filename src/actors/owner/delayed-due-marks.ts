import type { Clock, TimerHandle } from '../../domain/clock';

interface Batch {
  ids: string[];
  /** The clock reading of the hand-out (epoch ms), passed to `write`. */
  handedOutAt: number;
}

/**
 * The due marks (SCHEDULED/RETRYING → PENDING, docs/DESIGN.md §3) of tasks a partition owner handed to the
 * dispatcher, written only for those the dispatcher still holds after a delay.
 *
 * A due task handed out is usually claimed within milliseconds, and a claim takes a due SCHEDULED
 * or RETRYING task directly (transition `dueClaim`), so its mark would be a wasted write: measured
 * with `bench-peers` (4 interleaved runs each, delay 1 s), a due backlog of 20,000 drained at a
 * median of 15,040/s against 13,140/s with every mark written, and a herd of 2,000 started with
 * p99 73–95 ms against 82–108 ms. A task still waiting after the delay (parked behind a token
 * bucket, or behind a backlog larger than the worker slots) is marked, so the store and the API
 * show it PENDING.
 *
 * Marks wait in two generations swept by one timer every `delayMs`: a sweep writes the older
 * generation and ages the newer one, so a mark waits between `delayMs` and twice that. Only timer
 * intervals count, never clock readings, so a clock that steps back or forward neither holds marks
 * back nor writes them early (the `Clock` contract allows both). `delayMs` 0 writes every mark at
 * once.
 */
export class DelayedDueMarks {
  private older: Batch[] = [];
  private newer: Batch[] = [];
  private timer: TimerHandle | null = null;
  private stopped = false;

  /**
   * @param delayMs the sweep interval (ms, ≥ 0): a mark waits between it and twice it
   * @param write writes the marks of `ids`, given the hand-out's clock reading `handedOutAt`
   *   (epoch ms); it handles its own errors and must not throw
   * @param stillWaiting whether the dispatcher still holds the task (handed out, not released)
   */
  constructor(
    private readonly clock: Clock,
    private readonly delayMs: number,
    private readonly write: (ids: string[], handedOutAt: number) => void,
    private readonly stillWaiting: (id: string) => boolean,
  ) {}

  /** Marks `ids`, handed out at clock reading `now` (epoch ms), after the delay if still held; nothing after {@link stop}. */
  add(ids: string[], now: number): void {
    if (ids.length === 0 || this.stopped) return;
    if (this.delayMs === 0) {
      this.write(ids, now);
      return;
    }
    this.newer.push({ ids, handedOutAt: now });
    this.arm();
  }

  /** Hand-outs whose marks wait (tests, diagnostics). */
  get waiting(): number {
    return this.older.length + this.newer.length;
  }

  /** Drops every waiting mark and the timer, for good (the owner stopped: the next owner reads the tasks again). */
  stop(): void {
    this.stopped = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.older = [];
    this.newer = [];
  }

  private arm(): void {
    if (this.timer || this.waiting === 0) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      this.sweep();
    }, this.delayMs);
  }

  /** Writes the older generation's marks of tasks still held, ages the newer one, re-arms. */
  private sweep(): void {
    for (const batch of this.older) {
      const ids = batch.ids.filter(this.stillWaiting);
      if (ids.length > 0) this.write(ids, batch.handedOutAt);
    }
    this.older = this.newer;
    this.newer = [];
    this.arm();
  }
}
