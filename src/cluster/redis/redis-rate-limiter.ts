import type { Clock } from '../../domain/clock';
import type { LimitKind, RateBucket, RateLimit, RateLimiterBackend } from '../../domain/rate-limiter-backend';
import { LeasedBucket, LeaseOptions, TokenSource } from './leased-bucket';
import type { RedisConnection } from './redis-connection';
import type { RedisMetrics } from './redis-metrics';
import type { ScriptCommands } from './scripts/index';

/** Tuning of the shared buckets; durations in ms. */
export interface RedisRateLimiterOptions {
  /** Key prefix (default `scheduler:`). */
  prefix?: string;
  /** A lease covers about this much of the rate (default 100 ms): batch = rate × window, 1..maxBatch. */
  leaseWindowMs?: number;
  /** Most tokens in one lease (default 100). */
  maxBatch?: number;
  /** Unused leased tokens go back after this long (default 1,000). */
  leaseTtlMs?: number;
  /** After a failed request, local limits for this long (default 1,000). */
  retryAfterMs?: number;
}

/**
 * The cluster-mode {@link RateLimiterBackend}: each limit is a token bucket in Redis
 * (`take-tokens.lua`, `return-tokens.lua`) that every node leases from (see {@link LeasedBucket}).
 * The key names the limit and its setting (`<prefix>rl:<kind>:<rate>:<burst>:<key>`), so a changed
 * limit starts a fresh, full bucket on every node, as it does locally. When the connection comes
 * back or is lost, every bucket's `wake` is called so parked queues are looked at again.
 */
export class RedisRateLimiter implements RateLimiterBackend {
  private readonly prefix: string;
  /** The latest bucket of each limit (to wake on connection changes, and to give back its stock). */
  private readonly buckets = new Map<string, { bucket: LeasedBucket; wake: () => void }>();

  constructor(
    private readonly connection: RedisConnection,
    private readonly scripts: ScriptCommands,
    private readonly clock: Clock,
    private readonly metrics?: RedisMetrics,
    private readonly options: RedisRateLimiterOptions = {},
  ) {
    this.prefix = options.prefix ?? 'scheduler:';
    connection.onChange(() => {
      for (const { wake } of this.buckets.values()) wake();
    });
  }

  /** The Redis key of a limit. */
  keyOf(kind: LimitKind, key: string, limit: RateLimit): string {
    return `${this.prefix}rl:${kind}:${limit.ratePerSecond}:${limit.burst}:${key}`;
  }

  bucket(kind: LimitKind, key: string, limit: RateLimit, now: number, wake: () => void): RateBucket {
    const redisKey = this.keyOf(kind, key, limit);
    const { connection, scripts } = this;
    const source: TokenSource = {
      get up() {
        return connection.up;
      },
      async take(wanted) {
        const [granted, waitMs] = await connection.tracked(() => scripts.takeTokens(redisKey, limit.ratePerSecond, limit.burst, wanted));
        return { granted: Number(granted), waitMs: Number(waitMs) };
      },
      async give(count) {
        await connection.tracked(() => scripts.returnTokens(redisKey, limit.ratePerSecond, limit.burst, count));
      },
    };
    const window = this.options.leaseWindowMs ?? 100;
    const lease: LeaseOptions = {
      batch: Math.max(1, Math.min(this.options.maxBatch ?? 100, Math.floor((limit.ratePerSecond * window) / 1000))),
      leaseTtlMs: this.options.leaseTtlMs ?? 1000,
      retryAfterMs: this.options.retryAfterMs ?? 1000,
    };
    const metrics = this.metrics;
    const bucket = new LeasedBucket(
      kind,
      limit,
      now,
      source,
      this.clock,
      lease,
      wake,
      metrics && {
        lease: (k, result) => metrics.leaseRequests.inc({ limit: k, result }),
        fallback: (k) => metrics.fallbacks.inc({ limit: k }),
      },
    );
    const id = `${kind}:${key}`;
    this.buckets.get(id)?.bucket.release();
    this.buckets.set(id, { bucket, wake });
    return bucket;
  }

  /** Gives every bucket's unused stock back (at shutdown, before the connection closes). */
  async close(): Promise<void> {
    for (const { bucket } of this.buckets.values()) bucket.release();
    this.buckets.clear();
  }
}
