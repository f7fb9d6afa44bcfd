import type { Config } from '../config';
import type { RateLimit } from '../domain/dispatch-limits';
import { OverloadedError, RateLimitedError } from '../domain/errors';
import { decideAdmission } from '../domain/overflow-policy';
import { ownValue } from '../domain/own-value';
import { NewTask } from '../domain/task';
import { TokenBucket } from '../domain/token-bucket';

/** How long a refused caller should wait before retrying an overloaded submission (seconds). */
export const OVERLOAD_RETRY_AFTER_SECONDS = 5;

type GuardConfig = Pick<Config, 'submitRateLimit' | 'maxWaitingTasks' | 'maxWaitingPerTenant' | 'tenants' | 'overflow'>;

/**
 * Backpressure at submission (docs/TENANTS.md), checked before anything is stored, so nothing already
 * acknowledged is ever dropped: a token bucket per tenant on submissions (429 `RATE_LIMITED` with
 * `Retry-After`), and caps on waiting tasks (SCHEDULED, PENDING, RETRYING, BLOCKED) globally and
 * per tenant (503 `OVERLOADED` with `Retry-After`), with priority shedding near a cap: low from
 * 80 %, medium from 90 %, high at the cap. With `overflow.enabled`, a shed low-priority task is
 * held instead (state OVERFLOW, see `domain/overflow-policy.ts`) while the hold has room.
 *
 * Waiting and held counts are exact after each {@link refresh} (store counts, run only when a cap
 * is set) and grow with every stored submission in between, so between refreshes they err on the
 * high side. Tasks admitted and not yet stored count too ({@link admit} reserves them until
 * {@link settle}): submissions checked while earlier ones are still being written see those, so
 * concurrent requests on one node never overshoot a cap together. Other cluster members'
 * submissions are seen at the next refresh only (docs/API.md, "Backpressure at submission").
 */
export class SubmissionGuard {
  private readonly buckets = new Map<string, TokenBucket>();
  private waiting: Record<string, number> = {};
  private total = 0;
  private held: Record<string, number> = {};
  private heldTotal = 0;
  /** Admitted and not yet settled: waiting (by tenant) and held (by tenant), with their totals. */
  private readonly reserved = { waiting: new Map<string, number>(), held: new Map<string, number>(), waitingTotal: 0, heldTotal: 0 };

  constructor(private readonly config: GuardConfig) {}

  /** True when a waiting-task cap is configured (the counts are then needed). */
  get countsNeeded(): boolean {
    return (
      this.config.maxWaitingTasks !== null ||
      this.config.maxWaitingPerTenant !== null ||
      Object.values(this.config.tenants).some((t) => t.maxWaiting !== undefined)
    );
  }

  /** The global waiting cap (null: none). */
  get globalCap(): number | null {
    return this.config.maxWaitingTasks;
  }

  /** A tenant's waiting cap: its own `maxWaiting`, else `maxWaitingPerTenant` (null: none). */
  tenantCap(tenant: string): number | null {
    return ownValue(this.config.tenants, tenant)?.maxWaiting ?? this.config.maxWaitingPerTenant;
  }

  /**
   * Replaces the counts with exact ones (`Store.countWaitingByTenant`, and when given
   * `Store.countOverflowByTenant`; without it the held counts are kept).
   */
  refresh(counts: Record<string, number>, held?: Record<string, number>): void {
    this.waiting = { ...counts };
    this.total = Object.values(counts).reduce((a, b) => a + b, 0);
    if (held) this.refreshHeld(held);
  }

  /** Replaces the held counts with exact ones (`Store.countOverflowByTenant`). */
  refreshHeld(held: Record<string, number>): void {
    this.held = { ...held };
    this.heldTotal = Object.values(held).reduce((a, b) => a + b, 0);
  }

  /**
   * Checks that `tasks` may be stored now (epoch ms), taking submission tokens, and says which of
   * them go into the overflow hold. Admitted tasks are reserved (counted as waiting, or held) until
   * the caller calls {@link settle} with the same tasks and answer, once their write has ended
   * (stored or failed); nothing is reserved when it throws.
   * @param options.overflow false: nothing may be held (a workflow's tasks, stored all together)
   * @returns per task, in order: true when it is to be stored OVERFLOW (held), false to store it as usual
   * @throws RateLimitedError (429) | OverloadedError (503), both with `retry_after_seconds`
   */
  admit(tasks: ReadonlyArray<Pick<NewTask, 'tenantId' | 'priority'>>, now: number, options: { overflow?: boolean } = {}): boolean[] {
    const settings = options.overflow === false ? { ...this.config.overflow, enabled: false } : this.config.overflow;
    const byTenant = new Map<string, number[]>();
    tasks.forEach((t, i) => {
      const list = byTenant.get(t.tenantId);
      if (list) list.push(i);
      else byTenant.set(t.tenantId, [i]);
    });
    const heldOut = new Array<boolean>(tasks.length).fill(false);
    let extraTotal = this.reserved.waitingTotal;
    let extraHeld = this.reserved.heldTotal;
    for (const [tenant, list] of byTenant) {
      const cap = this.tenantCap(tenant);
      let extra = this.reserved.waiting.get(tenant) ?? 0;
      let tenantHeld = (this.held[tenant] ?? 0) + (this.reserved.held.get(tenant) ?? 0);
      for (const i of list) {
        const t = tasks[i];
        const readings = [
          { scope: 'tenant' as const, waiting: (this.waiting[tenant] ?? 0) + extra, cap },
          { scope: 'global' as const, waiting: this.total + extraTotal, cap: this.config.maxWaitingTasks },
        ];
        const d = decideAdmission(t.priority, readings, tenantHeld, this.heldTotal + extraHeld, settings);
        if (d.kind === 'refuse') {
          throw new OverloadedError(d.scope, {
            tenant_id: tenant,
            priority: t.priority,
            waiting: d.waiting,
            cap: d.cap,
            retry_after_seconds: OVERLOAD_RETRY_AFTER_SECONDS,
          });
        }
        if (d.kind === 'overflow') {
          heldOut[i] = true;
          tenantHeld++;
          extraHeld++;
        } else {
          extra++;
          extraTotal++;
        }
      }
    }
    for (const [tenant, list] of byTenant) {
      const bucket = this.bucketOf(tenant, now);
      if (bucket && !bucket.tryTake(now, list.length)) {
        const retryAfter = Math.max(1, Math.ceil((bucket.nextTokenAt(now, list.length) - now) / 1000));
        throw new RateLimitedError(tenant, retryAfter, { rate_per_second: bucket.ratePerSecond, burst: bucket.burst });
      }
    }
    this.reserve(tasks, heldOut, 1);
    return heldOut;
  }

  /**
   * Ends the reservation {@link admit} made for `tasks` (the same tasks and its answer `held`), once
   * their write has ended: stored ones are counted by {@link stored} (call it first), failed ones
   * are not counted at all.
   */
  settle(tasks: ReadonlyArray<Pick<NewTask, 'tenantId'>>, held: readonly boolean[]): void {
    this.reserve(tasks, held, -1);
  }

  private reserve(tasks: ReadonlyArray<Pick<NewTask, 'tenantId'>>, held: readonly boolean[], sign: 1 | -1): void {
    tasks.forEach((t, i) => {
      const map = held[i] ? this.reserved.held : this.reserved.waiting;
      const n = (map.get(t.tenantId) ?? 0) + sign;
      if (n > 0) map.set(t.tenantId, n);
      else map.delete(t.tenantId);
      if (held[i]) this.reserved.heldTotal += sign;
      else this.reserved.waitingTotal += sign;
    });
  }

  /** Counts stored tasks as waiting, or as held for those stored OVERFLOW, until the next refresh. */
  stored(tasks: ReadonlyArray<{ tenantId: string; state: string }>): void {
    for (const t of tasks) {
      if (t.state === 'OVERFLOW') {
        this.held[t.tenantId] = (this.held[t.tenantId] ?? 0) + 1;
        this.heldTotal++;
      } else {
        this.waiting[t.tenantId] = (this.waiting[t.tenantId] ?? 0) + 1;
        this.total++;
      }
    }
  }

  private bucketOf(tenant: string, now: number): TokenBucket | null {
    const limit: RateLimit | null = ownValue(this.config.tenants, tenant)?.submitRateLimit ?? this.config.submitRateLimit;
    if (!limit) return null;
    let b = this.buckets.get(tenant);
    if (!b) {
      b = new TokenBucket(limit.ratePerSecond, limit.burst, now);
      this.buckets.set(tenant, b);
    }
    return b;
  }
}
