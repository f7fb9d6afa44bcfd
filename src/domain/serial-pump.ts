/**
 * Runs an asynchronous pass so that passes never overlap: a trigger while a pass runs asks for
 * exactly one more pass right after it (triggers coalesce). A pass starts once the trigger's turn
 * has run its microtasks, not inside the trigger: the messages an actor gets in one turn (a
 * partition owner's `released` from every claim answered together) are all taken in before one
 * pass runs, instead of one pass, and one hand-out message, per message. When a pass ends with
 * nothing more asked for, `onIdle` runs (an actor arms its timer there) and {@link settled}
 * waiters resolve. The partition owner and the cron evaluator are driven by one each.
 */
export class SerialPump {
  /** A pass is scheduled or running. */
  private running = false;
  /** The scheduled pass has not started yet: a trigger now is already served by it. */
  private scheduled = false;
  private again = false;
  private waiters: Array<() => void> = [];

  /**
   * @param pass the work of one pass; a rejection goes to `hooks.onError` and the pump goes on
   * @param hooks `stopped()`: no pass starts while it returns true; `onIdle()`: after the last pass
   */
  constructor(
    private readonly pass: () => Promise<void>,
    private readonly hooks: { onError(err: unknown): void; onIdle(): void; stopped(): boolean },
  ) {}

  /** Starts a pass at the end of this turn, or one more after the one scheduled or running. */
  trigger(): void {
    if (this.hooks.stopped()) return;
    if (this.running) {
      if (!this.scheduled) this.again = true;
      return;
    }
    this.running = true;
    this.scheduled = true;
    queueMicrotask(() => this.run());
  }

  /** Resolves when no pass is running or asked for. */
  settled(): Promise<void> {
    return this.running ? new Promise((resolve) => this.waiters.push(resolve)) : Promise.resolve();
  }

  private run(): void {
    this.scheduled = false;
    // Stopped between the trigger and now: no pass, and the pump is idle.
    const pass = this.hooks.stopped() ? Promise.resolve() : this.pass();
    pass
      .catch((err: unknown) => this.hooks.onError(err))
      .finally(() => {
        this.running = false;
        if (this.again) {
          this.again = false;
          if (!this.hooks.stopped()) {
            this.trigger();
            return;
          }
        }
        this.hooks.onIdle();
        for (const resolve of this.waiters.splice(0)) resolve();
      });
  }
}
