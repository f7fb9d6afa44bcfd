import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Clock } from '../../domain/clock';
import { RedisBus } from './bus';
import { ClockSyncOptions, OffsetClock } from '../offset-clock';
import { RedisConnection, RedisConnectionOptions } from './redis-connection';
import { RedisMetrics } from './redis-metrics';
import { RedisRateLimiter, RedisRateLimiterOptions } from './redis-rate-limiter';
import { RedisConcurrency, RedisConcurrencyOptions } from './redis-concurrency';
import { defineScripts } from './scripts/index';

/** Everything a cluster node coordinates through Redis. */
export interface Coordination {
  /** This node's id in coordination messages. */
  readonly nodeId: string;
  readonly connection: RedisConnection;
  /** The Redis server's clock as seen from here (errs late); re-measured periodically. */
  readonly clock: OffsetClock;
  /** Rate-limit buckets shared by the cluster (falls back to local buckets while Redis is away). */
  readonly rateLimiter: RedisRateLimiter;
  /** Concurrency-key slots shared by the cluster (the per-node limit while Redis is away). */
  readonly concurrency: RedisConcurrency;
  readonly bus: RedisBus;
  /**
   * 'up' while Redis answers; 'down' (readiness: degraded) while it is unreachable, refuses the
   * limits' scripts (out of memory: `connection.refusing`), or has not yet let this node subscribe
   * to the coordination channels (`bus.deaf`).
   */
  status(): 'up' | 'down';
  /** Stops re-measuring, gives leased tokens back and closes the connections. Idempotent. */
  close(): Promise<void>;
}

export interface CoordinationOptions {
  /** `redis://…` (config `redisUrl`, env REDIS_URL). */
  url: string;
  /** The local clock (reads and timers). */
  base: Clock;
  log: Logger;
  /** The service's metric registry (the `scheduler_redis_*` metrics go there). */
  registry?: Registry;
  nodeId?: string;
  /** Key and channel prefix (default `scheduler:`). */
  prefix?: string;
  connection?: RedisConnectionOptions;
  clockSync?: ClockSyncOptions;
  rateLimits?: RedisRateLimiterOptions;
  concurrency?: RedisConcurrencyOptions;
}

/**
 * The Redis key and channel prefix of a scheduler: `scheduler:`, or `scheduler:<schema>:` on the
 * PostgreSQL store in a schema other than `public`, so that clusters sharing one database in
 * their own schemas (docs/POSTGRES.md) and one Redis keep their rate limits, concurrency slots and
 * messages apart (as their LISTEN/NOTIFY channels already are, `scheduler.<schema>.*`).
 */
export function redisPrefixOf(config: { store: string; postgresSchema: string }): string {
  return config.store === 'postgres' && config.postgresSchema !== 'public' ? `scheduler:${config.postgresSchema}:` : 'scheduler:';
}

/**
 * Connects to Redis and sets up the clock, the shared rate limits and concurrency slots, and the bus. Never fails on an
 * unreachable server: it starts degraded (local clock, local limits) and recovers when Redis
 * answers. The first clock measurement is awaited when Redis is up, so the node starts on the
 * server's time.
 * @throws Error for a malformed URL
 */
export async function startCoordination(o: CoordinationOptions): Promise<Coordination> {
  const log = o.log.child({ component: 'redis' });
  const metrics = o.registry ? new RedisMetrics(o.registry) : undefined;
  const nodeId = o.nodeId ?? randomUUID();
  const connection = new RedisConnection(o.url, log, metrics, { probeKey: `${o.prefix ?? 'scheduler:'}refusal-probe`, ...o.connection });
  const scripts = defineScripts(connection.client);
  const clock = new OffsetClock(
    o.base,
    async () => {
      const [s, us] = await connection.client.time();
      return Number(s) * 1000 + Number(us) / 1000;
    },
    log,
    metrics,
    o.clockSync,
  );
  const rateLimiter = new RedisRateLimiter(connection, scripts, clock, metrics, { ...o.rateLimits, prefix: o.prefix });
  const concurrency = new RedisConcurrency(connection, scripts, clock, nodeId, metrics, { ...o.concurrency, prefix: o.prefix });
  const bus = new RedisBus(connection, nodeId, log, metrics, { prefix: o.prefix });
  if (await connection.connect()) await clock.measure();
  connection.watchLiveness(o.base);
  // Measure again at once whenever the connection comes back (the server may have changed).
  connection.onChange((up) => {
    if (up) void clock.measure();
  });
  clock.start();
  let closing: Promise<void> | null = null;
  return {
    nodeId,
    connection,
    clock,
    rateLimiter,
    concurrency,
    bus,
    status: () => (connection.up && connection.refusing === null && !bus.deaf ? 'up' : 'down'),
    close: () =>
      (closing ??= (async () => {
        clock.stop();
        await rateLimiter.close();
        concurrency.close();
        await connection.close();
      })()),
  };
}
