import { TokenBucket } from './token-bucket';

/** A token-bucket limit: starts per second and how many may start at once. */
export interface RateLimit {
  ratePerSecond: number;
  burst: number;
}

/** Which limit a bucket enforces: a task type's starts or a tenant's starts. */
export type LimitKind = 'task_type' | 'tenant';

/**
 * What the dispatcher asks of a rate limit, synchronously, on every start: {@link TokenBucket}
 * is one (embedded mode), a bucket that leases its tokens from Redis is another (cluster mode).
 * `now` is epoch ms on the scheduler's clock.
 */
export interface RateBucket {
  readonly ratePerSecond: number;
  readonly burst: number;
  /** Takes `n` tokens (default 1) when there are enough; false otherwise (nothing taken). */
  tryTake(now: number, n?: number): boolean;
  /**
   * When `n` tokens (default 1) will be there: ≤ now when they are already; Infinity when the
   * bucket cannot tell yet and will call back (see {@link RateLimiterBackend.bucket}'s `wake`).
   */
  nextTokenAt(now: number, n?: number): number;
  /** Gives back `n` tokens (default 1) taken for a start that did not happen (its claim was refused). */
  refund(now: number, n?: number): void;
}

/**
 * The port behind {@link DispatchLimits}: makes the bucket that enforces one limit. The local
 * backend gives in-process token buckets (one node's starts); the Redis backend
 * (`cluster/redis/redis-rate-limiter.ts`) gives buckets shared by every node of a cluster.
 */
export interface RateLimiterBackend {
  /**
   * A fresh, full bucket for `limit`.
   * @param now epoch ms
   * @param wake called when the bucket learns something that may let a parked queue start
   *   (tokens arrived asynchronously); the local backend never calls it
   */
  bucket(kind: LimitKind, key: string, limit: RateLimit, now: number, wake: () => void): RateBucket;
}

/** The embedded backend: a plain in-process {@link TokenBucket} per limit (no I/O, no callbacks). */
export const localRateLimiter: RateLimiterBackend = {
  bucket: (_kind, _key, limit, now) => new TokenBucket(limit.ratePerSecond, limit.burst, now),
};
