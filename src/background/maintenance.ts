import type { Logger } from 'pino';
import type { Config } from '../config';
import type { Clock, TimerHandle } from '../domain/clock';
import { StoreUnavailableError } from '../domain/errors';
import type { SchedulerMetrics } from '../observability/metrics';
import type { Store } from '../storage/store';

/** Most tasks (and most idempotency keys) one `purgeFinished` call deletes. */
export const PURGE_BATCH = 1000;

/** What {@link Maintenance} needs: the store, the clock for its timer, config, metrics, a logger. */
export interface MaintenanceDeps {
  store: Pick<Store, 'purgeFinished' | 'purgeCronFires'>;
  clock: Clock;
  config: Pick<Config, 'resultRetentionMs' | 'maintenanceIntervalMs'>;
  metrics: Pick<SchedulerMetrics, 'purgedTasks'>;
  log: Pick<Logger, 'debug' | 'warn'>;
}

/**
 * Retention (not an actor): every `maintenanceIntervalMs` one pass deletes the finished tasks
 * (DEAD included) that completed more than `resultRetentionMs` ago, with their history, and the
 * idempotency keys already released, in batches of {@link PURGE_BATCH} until a batch comes back
 * short. One timer on the injected clock (never setInterval): the next pass is scheduled when the
 * previous one has finished, so passes never overlap. A failed pass is logged and the next one
 * runs at the next interval.
 */
export class Maintenance {
  private timer: TimerHandle | null = null;
  private pass: Promise<unknown> | null = null;
  private running = false;
  /** Set by {@link stop}: a pass in progress ends after its current batch. */
  private stopping = false;

  constructor(private readonly deps: MaintenanceDeps) {}

  /** Schedules the first pass one interval from now. Idempotent. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = false;
    this.schedule();
  }

  /** Cancels the timer and waits for a pass in progress (it stops after its current batch). */
  async stop(): Promise<void> {
    this.running = false;
    this.stopping = true;
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    this.timer = null;
    await this.pass?.catch(() => undefined);
  }

  /**
   * One pass, at the clock's current time: `purgeFinished(now - resultRetentionMs, now, 1000)`
   * until fewer than 1000 tasks and keys come back (or {@link stop} is called); then cron fire
   * records older than the same cut-off, 1000 at a time.
   * @returns how many tasks, idempotency keys and fire records the pass deleted
   */
  async runOnce(): Promise<{ tasks: number; idempotencyKeys: number; cronFires: number }> {
    const { store, clock, config, metrics, log } = this.deps;
    const now = clock.now();
    const before = now - config.resultRetentionMs;
    const total = { tasks: 0, idempotencyKeys: 0, cronFires: 0 };
    for (;;) {
      const r = await store.purgeFinished(before, now, PURGE_BATCH);
      total.tasks += r.tasks;
      total.idempotencyKeys += r.idempotencyKeys;
      if (r.tasks > 0) metrics.purgedTasks.inc(r.tasks);
      const full = r.tasks >= PURGE_BATCH || r.idempotencyKeys >= PURGE_BATCH;
      if (!full || this.stopping) break;
    }
    for (;;) {
      const fires = await store.purgeCronFires(before, PURGE_BATCH);
      total.cronFires += fires;
      if (fires < PURGE_BATCH || this.stopping) break;
    }
    log.debug(
      { purged_tasks: total.tasks, purged_idempotency_keys: total.idempotencyKeys, purged_cron_fires: total.cronFires, before },
      'retention pass',
    );
    return total;
  }

  private schedule(): void {
    if (!this.running) return;
    this.timer = this.deps.clock.setTimeout(() => {
      this.timer = null;
      this.pass = this.runOnce()
        .catch((err: unknown) =>
          // A store fault is logged once, by the store's health.
          err instanceof StoreUnavailableError
            ? undefined
            : this.deps.log.warn({ err }, 'retention pass failed; retrying at the next interval'),
        )
        .finally(() => {
          this.pass = null;
          this.schedule();
        });
    }, this.deps.config.maintenanceIntervalMs);
  }
}
