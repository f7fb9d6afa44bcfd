import type { Clock } from '../domain/clock';

/**
 * An expensive read (a count over the whole task table) made for metrics, with a bounded duty
 * cycle: the last answer is reused while it is younger than `1 / dutyCycle` times the duration of
 * the read that produced it, and concurrent callers share one read in flight. On a small store a
 * read takes a millisecond and answers stay exact in practice; on ten million tasks a scan of
 * ~1 s is made at most every ~10 s (default duty cycle 0.1; the service uses 0.02) however often `/metrics` is scraped,
 * instead of keeping a core busy. Durations are measured on the injected clock.
 */
export class SampledRead<T> {
  private last: { value: T; at: number; tookMs: number } | null = null;
  private inFlight: Promise<T> | null = null;

  /**
   * @param read the read (e.g. `store.countByState`)
   * @param clock time source for ages and durations
   * @param dutyCycle largest share of time spent reading, in (0, 1]
   */
  constructor(
    private readonly read: () => Promise<T>,
    private readonly clock: Clock,
    private readonly dutyCycle = 0.1,
  ) {}

  /** The last answer if still fresh by the duty-cycle rule, else a new read's (shared while it runs). */
  get(): Promise<T> {
    const now = this.clock.now();
    if (this.last && now >= this.last.at && now - this.last.at < this.last.tookMs / this.dutyCycle) return Promise.resolve(this.last.value);
    if (this.inFlight) return this.inFlight;
    const started = now;
    const p = this.read().then(
      (value) => {
        const end = this.clock.now();
        this.last = { value, at: end, tookMs: Math.max(0, end - started) };
        this.inFlight = null;
        return value;
      },
      (err: unknown) => {
        this.inFlight = null;
        throw err;
      },
    );
    this.inFlight = p;
    return p;
  }
}
