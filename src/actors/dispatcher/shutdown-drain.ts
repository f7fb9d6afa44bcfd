import type { Clock } from '../../domain/clock';

/** What a drain found at its end. */
export interface DrainResult {
  /** Attempts still running at the end of the grace (ended as free retries), or at an idle end 0. */
  stillRunning: number;
  /** Finished attempts whose completions the store has not taken (kept in memory). */
  unwritten: number;
}

/** The dispatcher as its drain sees it. */
export interface DrainHost {
  /** Nothing runs, no claim is in flight and no completion waits for a store that may still take it. */
  idle(): boolean;
  /** Attempts running now. */
  runningCount(): number;
  /** Completions kept in memory for the store. */
  unwrittenCount(): number;
  /**
   * Ends what still runs when the grace is over (as free retries, written through the recorder).
   * @returns how many the store took; never rejects
   */
  interrupt(): Promise<number>;
}

/**
 * A dispatcher's graceful stop (the supervisor's `drain`): from {@link begin} on nothing new is
 * dispatched; {@link wait} resolves once the host is idle (every running attempt ended and was
 * written) or, at the end of the grace (ms, on the injected clock), after the host interrupted
 * what still runs. The host calls {@link settle} after anything that may have made it idle.
 */
export class ShutdownDrain {
  private active = false;
  private waiters: Array<() => void> = [];

  constructor(
    private readonly clock: Clock,
    private readonly host: DrainHost,
  ) {}

  /** A drain has begun: nothing new starts here. */
  get draining(): boolean {
    return this.active;
  }

  /** Marks the drain begun (before the host stops its sources, whose hooks may ask {@link draining}). */
  begin(): void {
    this.active = true;
  }

  /** Resolves once idle, or `graceMs` after this call with what the interruption ended. */
  wait(graceMs: number): Promise<DrainResult> {
    if (this.host.idle()) return Promise.resolve({ stillRunning: 0, unwritten: this.host.unwrittenCount() });
    return new Promise((resolve) => {
      // Finished attempts whose completions the store did not take are not running: counted apart.
      const waiter = () => {
        this.clock.clearTimeout(timer);
        resolve({ stillRunning: this.host.runningCount(), unwritten: this.host.unwrittenCount() });
      };
      const timer = this.clock.setTimeout(() => {
        // The grace is over: what still runs is ended as a free retry before the workers stop, so a
        // stop costs no task its retry budget. Counted as still running when the store took it;
        // else it is among the unwritten (a store fault: it will be recovered as lost).
        this.waiters = this.waiters.filter((w) => w !== waiter);
        void this.host.interrupt().then((stillRunning) => resolve({ stillRunning, unwritten: this.host.unwrittenCount() }));
      }, graceMs);
      this.waiters.push(waiter);
    });
  }

  /** Answers the waiters once the host is idle. */
  settle(): void {
    if (this.waiters.length > 0 && this.host.idle()) for (const w of this.waiters.splice(0)) w();
  }
}
