import { Counter, Gauge, Registry } from 'prom-client';

/**
 * Metrics of the PostgreSQL coordination (cluster mode on the PostgreSQL store without Redis: the
 * LISTEN/NOTIFY bus and the database clock), registered on the service's registry. Base units,
 * `scheduler_` prefix (docs/DESIGN.md §12); the same meaning as their `scheduler_redis_*` peers.
 */
export class PgCoordinationMetrics {
  readonly up: Gauge<string>;
  readonly clockOffset: Gauge<string>;
  readonly clockRoundTrip: Gauge<string>;
  readonly clockSamples: Counter<'result'>;
  readonly messages: Counter<'channel' | 'direction'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.up = new Gauge({
      name: 'scheduler_postgres_listen_up',
      help: 'Whether the coordination connection to PostgreSQL (LISTEN/NOTIFY, clock samples) is ready (1) or reconnecting (0).',
      registers,
    });
    this.clockOffset = new Gauge({
      name: 'scheduler_postgres_clock_offset_seconds',
      help: "Correction applied to the local clock to read the PostgreSQL server's clock (offset minus half the round trip: errs late).",
      registers,
    });
    this.clockRoundTrip = new Gauge({
      name: 'scheduler_postgres_clock_round_trip_seconds',
      help: 'Round trip of the clock_timestamp() sample the clock correction comes from (its uncertainty is half of it).',
      registers,
    });
    this.clockSamples = new Counter({
      name: 'scheduler_postgres_clock_samples_total',
      help: 'clock_timestamp() samples taken to measure the clock offset, by result (ok, failed).',
      labelNames: ['result'],
      registers,
    });
    this.messages = new Counter({
      name: 'scheduler_postgres_messages_total',
      help: 'LISTEN/NOTIFY coordination messages, by channel (wake, cancel, ended) and direction (published, received, dropped, invalid, oversize); a split message counts once per notification.',
      labelNames: ['channel', 'direction'],
      registers,
    });
  }
}
