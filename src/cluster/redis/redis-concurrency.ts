import type { Clock } from '../../domain/clock';
import type { ConcurrencyBackend, SharedSlots } from '../../domain/concurrency-limits';
import { LeasedSlots, SlotLeaseOptions, SlotSource } from './leased-slots';
import type { RedisConnection } from './redis-connection';
import type { RedisMetrics } from './redis-metrics';
import type { ScriptCommands } from './scripts/index';

/** Tuning of the shared concurrency slots; durations in ms (defaults in brackets). */
export interface RedisConcurrencyOptions {
  /** Key prefix (`scheduler:`). */
  prefix?: string;
  /** Lease life without renewal: a dead node's slots come back after it (15,000). */
  ttlMs?: number;
  /** Renewal period (ttlMs / 3). */
  renewMs?: number;
  /** A free slot goes back to the other nodes after this long (250). */
  idleMs?: number;
  /** After an empty grant, asked again this often while tasks wait (200). */
  pollMs?: number;
  /** After a failed request, the per-node limit for this long (1,000). */
  retryAfterMs?: number;
  /** Most slots asked for at once (8). */
  batch?: number;
}

/**
 * The cluster-mode {@link ConcurrencyBackend}: each limited key is a sorted set of slot leases in
 * Redis, `<prefix>cc:<key>`, shared by every node ({@link LeasedSlots}). The set is the same
 * whatever the limit, so a changed limit applies to the slots already held. When the connection
 * comes back or is lost, every key's `wake` is called so the tasks set aside are looked at again;
 * when it comes back, the attempts started without a slot meanwhile ask for one
 * ({@link LeasedSlots.reback}).
 */
export class RedisConcurrency implements ConcurrencyBackend {
  private readonly prefix: string;
  private readonly slotsByKey = new Map<string, { slots: LeasedSlots; wake: () => void }>();
  private readonly lease: SlotLeaseOptions;

  constructor(
    private readonly connection: RedisConnection,
    private readonly scripts: ScriptCommands,
    private readonly clock: Clock,
    private readonly nodeId: string,
    private readonly metrics?: RedisMetrics,
    options: RedisConcurrencyOptions = {},
  ) {
    this.prefix = options.prefix ?? 'scheduler:';
    const ttlMs = options.ttlMs ?? 15_000;
    this.lease = {
      ttlMs,
      renewMs: options.renewMs ?? Math.floor(ttlMs / 3),
      idleMs: options.idleMs ?? 250,
      pollMs: options.pollMs ?? 200,
      retryAfterMs: options.retryAfterMs ?? 1000,
      batch: options.batch ?? 8,
    };
    connection.onChange((up) => {
      for (const { slots, wake } of this.slotsByKey.values()) {
        if (up) slots.reback();
        wake();
      }
    });
  }

  /** The Redis key of a concurrency key's slot set. */
  keyOf(key: string): string {
    return `${this.prefix}cc:${key}`;
  }

  slots(key: string, maxRunning: number, wake: () => void): SharedSlots {
    const redisKey = this.keyOf(key);
    const { connection, scripts, lease } = this;
    const source: SlotSource = {
      get up() {
        return connection.up;
      },
      async acquire(limit, wanted, holder) {
        const [granted] = await connection.tracked(() => scripts.acquireSlots(redisKey, limit, wanted, lease.ttlMs, holder));
        return Number(granted);
      },
      async renew(keep, release) {
        return connection.tracked(() => scripts.renewSlots(redisKey, lease.ttlMs, keep.length, ...keep, ...release));
      },
    };
    const metrics = this.metrics;
    const slots = new LeasedSlots(
      maxRunning,
      this.nodeId,
      source,
      this.clock,
      lease,
      wake,
      metrics && {
        lease: (result) => metrics.leaseRequests.inc({ limit: 'concurrency', result }),
        fallback: () => metrics.fallbacks.inc({ limit: 'concurrency' }),
      },
    );
    this.slotsByKey.get(key)?.slots.close();
    this.slotsByKey.set(key, { slots, wake });
    return slots;
  }

  /** Gives every held slot back (at shutdown, before the connection closes). */
  close(): void {
    for (const { slots } of this.slotsByKey.values()) slots.close();
    this.slotsByKey.clear();
  }
}
