import { Counter, Gauge, Registry } from 'prom-client';

/**
 * Metrics of the Redis coordination (cluster mode), registered on the service's registry next to
 * {@link SchedulerMetrics}; absent in embedded mode. Base units, `scheduler_` prefix (docs/DESIGN.md §12).
 */
export class RedisMetrics {
  readonly up: Gauge<string>;
  readonly clockOffset: Gauge<string>;
  readonly clockRoundTrip: Gauge<string>;
  readonly clockSamples: Counter<'result'>;
  readonly leaseRequests: Counter<'limit' | 'result'>;
  readonly fallbacks: Counter<'limit'>;
  readonly messages: Counter<'channel' | 'direction'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.up = new Gauge({ name: 'scheduler_redis_up', help: 'Whether the Redis connection is ready (1) or unreachable (0).', registers });
    this.clockOffset = new Gauge({
      name: 'scheduler_redis_clock_offset_seconds',
      help: 'Correction applied to the local clock to read the Redis server clock (offset minus half the round trip: errs late).',
      registers,
    });
    this.clockRoundTrip = new Gauge({
      name: 'scheduler_redis_clock_round_trip_seconds',
      help: 'Round trip of the TIME sample the clock correction comes from (its uncertainty is half of it).',
      registers,
    });
    this.clockSamples = new Counter({
      name: 'scheduler_redis_clock_samples_total',
      help: 'TIME samples taken to measure the clock offset, by result (ok, failed).',
      labelNames: ['result'],
      registers,
    });
    this.leaseRequests = new Counter({
      name: 'scheduler_redis_token_leases_total',
      help: 'Lease requests to Redis: tokens of the shared buckets (limit task_type or tenant) and concurrency slots (limit concurrency), by result (granted, empty, failed).',
      labelNames: ['limit', 'result'],
      registers,
    });
    this.fallbacks = new Counter({
      name: 'scheduler_redis_rate_limit_fallbacks_total',
      help: 'Starts allowed by the local token bucket or concurrency count because Redis was unreachable (the limit then holds per node).',
      labelNames: ['limit'],
      registers,
    });
    this.messages = new Counter({
      name: 'scheduler_redis_messages_total',
      help: 'Pub/sub coordination messages, by channel (wake, cancel, ended) and direction (published, received, dropped, invalid).',
      labelNames: ['channel', 'direction'],
      registers,
    });
  }
}
