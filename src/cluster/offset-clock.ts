import type { Logger } from 'pino';
import { Clock, TimerHandle } from '../domain/clock';
import type { Counter, Gauge } from 'prom-client';
import { MAX_DRIFT, OffsetEstimate, OffsetFilter, OffsetSample } from './clock-offset';

/**
 * A new correction lower than the one in use by at most this much (ms) does not move the clock
 * back: the clock holds its last reading until the local clock has caught up (NTP's step
 * threshold, STEPT = 0.128 s, in RFC 5905's Appendix A: smaller offsets are slewed, larger
 * ones stepped). A larger one (the server changed: a failover) is taken at once.
 */
export const STEP_THRESHOLD_MS = 128;

/**
 * The metrics an {@link OffsetClock} keeps (those of the coordination backend it samples: Redis's
 * `scheduler_redis_clock_*`, PostgreSQL's `scheduler_postgres_clock_*`).
 */
export interface ClockMetrics {
  /** Correction in use (seconds). */
  readonly clockOffset: Gauge<string>;
  /** Round trip of the sample the correction comes from (seconds). */
  readonly clockRoundTrip: Gauge<string>;
  /** Samples taken, by result (`ok`, `failed`). */
  readonly clockSamples: Counter<'result'>;
}

/** Reads the reference server's time (epoch ms, fractional allowed); rejects when unreachable. */
export type ServerTime = () => Promise<number>;

/** Sampling rhythm; durations in ms. */
export interface ClockSyncOptions {
  /**
   * Time between two measurements (default 30,000). `Infinity`: none but the first and those after
   * a reconnection. A scheduler started on a ManualClock uses that (bootstrap.ts `clockSync`): the
   * server's clock runs in real time while the manual one moves in jumps, so every new sample would
   * move the corrected clock by the difference, backwards too.
   */
  intervalMs?: number;
  /** Server clock readings per measurement; the fastest counts (default 4). */
  samplesPerRound?: number;
  /** Samples kept across measurements for the minimum-round-trip choice (default 8). */
  window?: number;
}

/**
 * A {@link Clock} on a reference server's time (docs/DESIGN.md §4: one time source in cluster mode;
 * the server is Redis (`TIME`) or, without Redis, the PostgreSQL store (`clock_timestamp()`)):
 * `now()` is the local clock plus the measured correction (offset minus half the round trip, minus
 * 15 ppm of drift allowance per ms since the sample), so it errs late, never early. Timers run on the local clock (delays are durations; the callers
 * compare with `now()` when they wake). Before the first sample, and while the server is away, the
 * last correction holds (0 at first: the local clock). A re-measure never moves it back by up to
 * {@link STEP_THRESHOLD_MS}: it stands still until it has caught up; it goes back only when the
 * local clock does, or by a larger step (the server changed).
 */
export class OffsetClock implements Clock {
  private readonly filter: OffsetFilter;
  private correction = 0;
  /** Local time at which {@link correction} was computed (its drift allowance grows from there). */
  private correctedAt = 0;
  private timer: TimerHandle | null = null;
  private stopped = false;
  private synced = false;
  /**
   * After a small backward correction: the reading to hold (`value`) from local time `at` until
   * the corrected clock passes it. Dropped when the local clock reads before `at` (it stepped back).
   */
  private hold: { value: number; at: number } | null = null;

  /**
   * @param base the local clock (reads and timers)
   * @param serverTime one reading of the server's clock (Redis `TIME`, PostgreSQL `clock_timestamp()`)
   */
  constructor(
    private readonly base: Clock,
    private readonly serverTime: ServerTime,
    private readonly log: Logger,
    private readonly metrics?: ClockMetrics,
    private readonly options: ClockSyncOptions = {},
  ) {
    this.filter = new OffsetFilter(options.window ?? 8);
  }

  now(): number {
    return this.readAt(this.base.now());
  }

  monotonic(): number {
    return this.base.monotonic();
  }

  /** The reading at local time `local` (see {@link now}); drops a hold that is over. */
  private readAt(local: number): number {
    if (!this.synced) return local;
    const corrected = this.corrected(local);
    const hold = this.hold;
    if (hold && local >= hold.at && corrected < hold.value) return hold.value;
    this.hold = null;
    return corrected;
  }

  /**
   * The local reading `local` plus the correction, less the drift allowance since it was made, in
   * whole milliseconds, rounded down (never ahead of the server), as every Clock answers: stores
   * keep times as integers (PostgreSQL's bigint refuses a fraction).
   */
  private corrected(local: number): number {
    return Math.floor(local + this.correction - Math.max(0, local - this.correctedAt) * MAX_DRIFT);
  }

  setTimeout(fn: () => void, delayMs: number): TimerHandle {
    return this.base.setTimeout(fn, delayMs);
  }

  clearTimeout(handle: TimerHandle): void {
    this.base.clearTimeout(handle);
  }

  /** The correction in use (ms; server − local − half round trip). */
  get correctionMs(): number {
    return this.correction;
  }

  /** True once a sample has been taken. */
  get isSynced(): boolean {
    return this.synced;
  }

  /**
   * Takes one round of samples now. @returns the estimate in use afterwards (null before any
   * sample succeeded); never throws: a failed call is counted and the last correction stays.
   */
  async measure(): Promise<OffsetEstimate | null> {
    const rounds = Math.max(1, this.options.samplesPerRound ?? 4);
    for (let i = 0; i < rounds; i++) {
      const sentAt = this.base.now();
      let serverAt: number;
      try {
        serverAt = await this.serverTime();
      } catch (err) {
        this.metrics?.clockSamples.inc({ result: 'failed' });
        this.log.debug({ err }, 'clock sample failed');
        break;
      }
      const sample: OffsetSample = { sentAt, serverAt, receivedAt: this.base.now() };
      this.metrics?.clockSamples.inc({ result: 'ok' });
      this.filter.add(sample);
    }
    const at = this.base.now();
    const est = this.filter.current(at);
    if (est) {
      // A reading must not go back because a new sample had a slower round trip (a lower bound
      // lower than the last): a small step back is held (STEP_THRESHOLD_MS); both readings are
      // lower bounds of the server's time, so holding the higher one is never early.
      const before = this.synced ? this.readAt(at) : null;
      this.correction = est.correctionMs;
      this.correctedAt = at;
      const after = this.corrected(at);
      this.hold = before !== null && after < before && before - after <= STEP_THRESHOLD_MS ? { value: before, at } : null;
      this.synced = true;
      this.metrics?.clockOffset.set(est.correctionMs / 1000);
      this.metrics?.clockRoundTrip.set(est.roundTripMs / 1000);
    }
    return est;
  }

  /** Measures every `intervalMs` on the local clock until {@link stop} (never for `Infinity`). */
  start(): void {
    if (this.timer || this.stopped) return;
    const every = this.options.intervalMs ?? 30_000;
    if (!Number.isFinite(every)) return;
    const tick = () => {
      this.timer = this.base.setTimeout(() => {
        void this.measure().finally(() => {
          if (!this.stopped) tick();
        });
      }, every);
    };
    tick();
  }

  /** Stops re-measuring (the last correction stays). */
  stop(): void {
    this.stopped = true;
    if (this.timer) this.base.clearTimeout(this.timer);
    this.timer = null;
  }
}
