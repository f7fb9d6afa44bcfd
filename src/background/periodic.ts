import type { Clock, TimerHandle } from '../domain/clock';

/**
 * Runs `fn` every `intervalMs` on the injected clock, one run at a time: the next run is scheduled
 * when the previous one has finished (never setInterval). Errors go to `onError`; the next run
 * happens as usual. `stop()` cancels the next run and waits for one in progress.
 */
export class Periodic {
  private timer: TimerHandle | null = null;
  private current: Promise<void> | null = null;
  private stopped = true;

  constructor(
    private readonly clock: Clock,
    private readonly intervalMs: number,
    private readonly fn: () => Promise<unknown>,
    private readonly onError: (err: unknown) => void,
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    await this.current;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      this.current = this.fn()
        .then(() => undefined, this.onError)
        .finally(() => {
          this.current = null;
          this.schedule();
        });
    }, this.intervalMs);
  }
}
