/**
 * Runs an asynchronous pass so that passes never overlap: a trigger while a pass runs asks for
 * exactly one more pass right after it (triggers coalesce). When a pass ends with nothing more
 * asked for, `onIdle` runs (an actor arms its timer there) and {@link settled} waiters resolve.
 * The partition owner and the cron evaluator are driven by one each.
 */
export class SerialPump {
  private running = false;
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

  /** Starts a pass now, or one more after the running one. */
  trigger(): void {
    if (this.hooks.stopped()) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.pass()
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

  /** Resolves when no pass is running or asked for. */
  settled(): Promise<void> {
    return this.running ? new Promise((resolve) => this.waiters.push(resolve)) : Promise.resolve();
  }
}
