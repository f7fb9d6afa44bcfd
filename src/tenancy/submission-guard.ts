import type { Config } from '../config';
import type { RateLimit } from '../domain/dispatch-limits';
import { OverloadedError, RateLimitedError } from '../domain/errors';
import { NewTask, Priority } from '../domain/task';
import { TokenBucket } from '../domain/token-bucket';

/**
 * Share of a cap at which each priority is refused (priority shedding): near the cap low goes
 * first, then medium; high is refused only at the cap itself.
 */
export const SHEDDING_THRESHOLDS: Readonly<Record<Priority, number>> = { low: 0.8, medium: 0.9, high: 1 };

/** How long a refused caller should wait before retrying an overloaded submission (seconds). */
export const OVERLOAD_RETRY_AFTER_SECONDS = 5;

type GuardConfig = Pick<Config, 'submitRateLimit' | 'maxWaitingTasks' | 'maxWaitingPerTenant' | 'tenants'>;

/**
 * Backpressure at submission (issue 5), checked before anything is stored, so nothing already
 * acknowledged is ever dropped: a token bucket per tenant on submissions (429 `RATE_LIMITED` with
 * `Retry-After`), and caps on waiting tasks (SCHEDULED, PENDING, RETRYING, BLOCKED) globally and
 * per tenant (503 `OVERLOADED` with `Retry-After`), with priority shedding near a cap.
 *
 * Waiting counts are exact after each {@link refresh} (a store count, run only when a cap is set)
 * and grow with every stored submission in between, so between refreshes they err on the high
 * side: a cap is never overshot by more than what was dispatched since the last refresh.
 */
export class SubmissionGuard {
  private readonly buckets = new Map<string, TokenBucket>();
  private waiting: Record<string, number> = {};
  private total = 0;

  constructor(private readonly config: GuardConfig) {}

  /** True when a waiting-task cap is configured (the counts are then needed). */
  get countsNeeded(): boolean {
    return this.config.maxWaitingTasks !== null || this.config.maxWaitingPerTenant !== null || Object.values(this.config.tenants).some((t) => t.maxWaiting !== undefined);
  }

  /** Replaces the counts with exact ones (from `Store.countWaitingByTenant`). */
  refresh(counts: Record<string, number>): void {
    this.waiting = { ...counts };
    this.total = Object.values(counts).reduce((a, b) => a + b, 0);
  }

  /**
   * Checks that `tasks` may be stored now (epoch ms), taking submission tokens.
   * @throws RateLimitedError (429) | OverloadedError (503), both with `retry_after_seconds`
   */
  admit(tasks: ReadonlyArray<Pick<NewTask, 'tenantId' | 'priority'>>, now: number): void {
    const byTenant = new Map<string, Array<Pick<NewTask, 'tenantId' | 'priority'>>>();
    for (const t of tasks) {
      const list = byTenant.get(t.tenantId);
      if (list) list.push(t);
      else byTenant.set(t.tenantId, [t]);
    }
    let extraTotal = 0;
    for (const [tenant, list] of byTenant) {
      const cap = this.config.tenants[tenant]?.maxWaiting ?? this.config.maxWaitingPerTenant;
      list.forEach((t, i) => {
        this.checkCap('tenant', tenant, t.priority, (this.waiting[tenant] ?? 0) + i, cap);
        this.checkCap('global', tenant, t.priority, this.total + extraTotal + i, this.config.maxWaitingTasks);
      });
      extraTotal += list.length;
    }
    for (const [tenant, list] of byTenant) {
      const bucket = this.bucketOf(tenant, now);
      if (bucket && !bucket.tryTake(now, list.length)) {
        const retryAfter = Math.max(1, Math.ceil((bucket.nextTokenAt(now, list.length) - now) / 1000));
        throw new RateLimitedError(tenant, retryAfter, { rate_per_second: bucket.ratePerSecond, burst: bucket.burst });
      }
    }
  }

  /** Counts stored tasks as waiting until the next refresh. */
  stored(tasks: ReadonlyArray<Pick<NewTask, 'tenantId'>>): void {
    for (const t of tasks) this.waiting[t.tenantId] = (this.waiting[t.tenantId] ?? 0) + 1;
    this.total += tasks.length;
  }

  private checkCap(scope: 'global' | 'tenant', tenant: string, priority: Priority, waiting: number, cap: number | null | undefined): void {
    if (cap === null || cap === undefined) return;
    if (waiting < cap * SHEDDING_THRESHOLDS[priority]) return;
    throw new OverloadedError(scope, { tenant_id: tenant, priority, waiting, cap, retry_after_seconds: OVERLOAD_RETRY_AFTER_SECONDS });
  }

  private bucketOf(tenant: string, now: number): TokenBucket | null {
    const limit: RateLimit | null = this.config.tenants[tenant]?.submitRateLimit ?? this.config.submitRateLimit;
    if (!limit) return null;
    let b = this.buckets.get(tenant);
    if (!b) {
      b = new TokenBucket(limit.ratePerSecond, limit.burst, now);
      this.buckets.set(tenant, b);
    }
    return b;
  }
}
