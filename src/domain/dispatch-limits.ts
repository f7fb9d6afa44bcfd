import { TokenBucket } from './token-bucket';

/** A token-bucket limit: starts per second and how many may start at once. */
export interface RateLimit {
  ratePerSecond: number;
  burst: number;
}

/**
 * The dispatch settings an operator changes at run time (issue 5): tenant weights for the
 * weighted round-robin, and token-bucket rate limits per task type and per tenant. One instance
 * per scheduler, shared by the dispatcher (which reads it on every start) and the service (which
 * applies admin changes after storing them). Changing a limit starts a fresh, full bucket.
 */
export class DispatchLimits {
  private readonly weights = new Map<string, number>();
  private readonly typeBuckets = new Map<string, TokenBucket>();
  private readonly tenantBuckets = new Map<string, TokenBucket>();
  private readonly listeners: Array<() => void> = [];

  /** Weight of a tenant (default 1). */
  weightOf = (tenantId: string): number => this.weights.get(tenantId) ?? 1;

  typeBucket = (taskType: string): TokenBucket | null => this.typeBuckets.get(taskType) ?? null;

  tenantBucket = (tenantId: string): TokenBucket | null => this.tenantBuckets.get(tenantId) ?? null;

  /** @throws RangeError for a weight that is not a positive finite number */
  setWeight(tenantId: string, weight: number): void {
    if (!(weight > 0) || !Number.isFinite(weight)) throw new RangeError(`weight must be > 0, got ${weight}`);
    this.weights.set(tenantId, weight);
    this.changed();
  }

  /** Sets (or with null removes) the limit of a task type. `now`: epoch ms. */
  setTypeLimit(taskType: string, limit: RateLimit | null, now: number): void {
    this.set(this.typeBuckets, taskType, limit, now);
  }

  /** Sets (or with null removes) the limit of a tenant's starts. `now`: epoch ms. */
  setTenantLimit(tenantId: string, limit: RateLimit | null, now: number): void {
    this.set(this.tenantBuckets, tenantId, limit, now);
  }

  /** The current settings (for the admin API). */
  snapshot(): { weights: Record<string, number>; taskTypes: Record<string, RateLimit>; tenants: Record<string, RateLimit> } {
    const limits = (m: Map<string, TokenBucket>) =>
      Object.fromEntries([...m].map(([k, b]) => [k, { ratePerSecond: b.ratePerSecond, burst: b.burst }]));
    return { weights: Object.fromEntries(this.weights), taskTypes: limits(this.typeBuckets), tenants: limits(this.tenantBuckets) };
  }

  /** Calls `fn` after every change (the dispatcher looks at its parked queues again). */
  onChange(fn: () => void): void {
    this.listeners.push(fn);
  }

  private set(map: Map<string, TokenBucket>, key: string, limit: RateLimit | null, now: number): void {
    if (limit === null) map.delete(key);
    else map.set(key, new TokenBucket(limit.ratePerSecond, limit.burst, now));
    this.changed();
  }

  private changed(): void {
    for (const fn of this.listeners) fn();
  }
}
