import { ConcurrencyBackend, ConcurrencyLimits } from './concurrency-limits';
import { LimitKind, localRateLimiter, RateBucket, RateLimit, RateLimiterBackend } from './rate-limiter-backend';

export type { RateLimit } from './rate-limiter-backend';

/** A tenant's weight in the dispatch's round-robin when neither the config nor an admin set one. */
export const DEFAULT_TENANT_WEIGHT = 1;

/**
 * The dispatch settings an operator changes at run time (docs/TENANTS.md): tenant weights for the
 * weighted round-robin, token-bucket rate limits per task type and per tenant, and the limits per
 * concurrency key ({@link ConcurrencyLimits}). One instance
 * per scheduler, shared by the dispatcher (which reads it on every start) and the service (which
 * applies admin changes after storing them). Changing a limit starts a fresh, full bucket, made by
 * the {@link RateLimiterBackend} (in-process token buckets by default; shared ones in Redis in
 * cluster mode).
 */
export class DispatchLimits {
  private readonly weights = new Map<string, number>();
  private readonly typeBuckets = new Map<string, RateBucket>();
  private readonly tenantBuckets = new Map<string, RateBucket>();
  private readonly listeners: Array<() => void> = [];
  /** Limits per concurrency key and this node's running count per key. */
  readonly concurrency: ConcurrencyLimits;

  /**
   * @param backend makes the bucket of each limit (default: {@link localRateLimiter})
   * @param concurrencyBackend shares concurrency limits across nodes (Redis); null: per process
   */
  constructor(
    private readonly backend: RateLimiterBackend = localRateLimiter,
    concurrencyBackend: ConcurrencyBackend | null = null,
  ) {
    this.concurrency = new ConcurrencyLimits(concurrencyBackend);
  }

  /** Weight of a tenant (default {@link DEFAULT_TENANT_WEIGHT}). */
  weightOf = (tenantId: string): number => this.weights.get(tenantId) ?? DEFAULT_TENANT_WEIGHT;

  typeBucket = (taskType: string): RateBucket | null => this.typeBuckets.get(taskType) ?? null;

  tenantBucket = (tenantId: string): RateBucket | null => this.tenantBuckets.get(tenantId) ?? null;

  /** @throws RangeError for a weight that is not a positive finite number */
  setWeight(tenantId: string, weight: number): void {
    if (!(weight > 0) || !Number.isFinite(weight)) throw new RangeError(`weight must be > 0, got ${weight}`);
    this.weights.set(tenantId, weight);
    this.changed();
  }

  /** Removes a tenant's weight: it competes with the default weight, 1. */
  removeWeight(tenantId: string): void {
    if (this.weights.delete(tenantId)) this.changed();
  }

  /** Sets (or with null removes) the limit of a task type. `now`: epoch ms. */
  setTypeLimit(taskType: string, limit: RateLimit | null, now: number): void {
    this.set(this.typeBuckets, 'task_type', taskType, limit, now);
  }

  /** Sets (or with null removes) the limit of a tenant's starts. `now`: epoch ms. */
  setTenantLimit(tenantId: string, limit: RateLimit | null, now: number): void {
    this.set(this.tenantBuckets, 'tenant', tenantId, limit, now);
  }

  /** The current settings (for the admin API). */
  snapshot(): { weights: Record<string, number>; taskTypes: Record<string, RateLimit>; tenants: Record<string, RateLimit> } {
    const limits = (m: Map<string, RateBucket>) =>
      Object.fromEntries([...m].map(([k, b]) => [k, { ratePerSecond: b.ratePerSecond, burst: b.burst }]));
    return { weights: Object.fromEntries(this.weights), taskTypes: limits(this.typeBuckets), tenants: limits(this.tenantBuckets) };
  }

  /** Calls `fn` after every change (the dispatcher looks at its parked queues again). */
  onChange(fn: () => void): void {
    this.listeners.push(fn);
  }

  private set(map: Map<string, RateBucket>, kind: LimitKind, key: string, limit: RateLimit | null, now: number): void {
    if (limit === null) map.delete(key);
    else
      map.set(
        key,
        this.backend.bucket(kind, key, limit, now, () => this.changed()),
      );
    this.changed();
  }

  private changed(): void {
    for (const fn of this.listeners) fn();
  }
}
