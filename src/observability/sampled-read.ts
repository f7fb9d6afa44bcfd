import type { Clock } from '../domain/clock';

/**
 * An expensive read (a count over the whole task table) made for metrics, with a bounded duty
 * cycle: the last answer is reused while it is younger than `1 / dutyCycle` times the duration of
 * the read that produced it, and concurrent callers share one read in flight. On a small store a
 * read takes a millisecond and answers stay exact in practice; on ten million tasks a scan of
 * ~1.5 s is made at most every ~75 s (the service's duty cycle 0.02) however often `/metrics` is
 * scraped, instead of keeping a core busy.
 *
 * Once a read has taken `serveStaleAboveMs` or more, callers never wait for the next one: they get
 * the last answer while the new read runs (stale-while-revalidate, RFC 5861's rule for HTTP caches
 * applied to one value), so a scrape stays fast on any store size. A failed background read is
 * dropped; the next call after it starts another. Durations are measured on the injected clock.
 *
 * Before the first answer, callers wait for the first read at most `firstWaitMs`, then get null
 * (no answer yet) while it goes on: at fifty million tasks on a loaded machine the first count
 * took over 10 s, and a first `/metrics` scrape that waits for it times out; once it has
 * answered, the rule above applies.
 *
 * An answer is also reused for at least `minAgeMs` however fast its read was: a count of a few
 * milliseconds made at every scrape of a frequent scraper (4 a second in the benchmarks) costs the
 * store more than a gauge that is at most that old is worth.
 */
export class SampledRead<T> {
  private last: { value: T; at: number; tookMs: number } | null = null;
  private inFlight: Promise<T> | null = null;

  /**
   * @param read the read (e.g. `store.countByState`)
   * @param clock time source for ages and durations
   * @param dutyCycle largest share of time spent reading, in (0, 1]
   * @param serveStaleAboveMs reads that took at least this long (ms) are refreshed in the
   *   background while callers get the last answer; faster ones are awaited (exact answers).
   *   Default: never (every stale answer waits for the next read).
   * @param minAgeMs an answer is reused for at least this long (ms) after its read ended; default 0
   * @param firstWaitMs with no answer yet, how long (ms, on the clock) a caller waits for the read
   *   in flight before it gets null; default: until it answers
   */
  constructor(
    private readonly read: () => Promise<T>,
    private readonly clock: Clock,
    private readonly dutyCycle = 0.1,
    private readonly serveStaleAboveMs = Number.POSITIVE_INFINITY,
    private readonly minAgeMs = 0,
    private readonly firstWaitMs = Number.POSITIVE_INFINITY,
  ) {}

  /**
   * The last answer if still fresh (younger than `minAgeMs` or than the duty-cycle rule allows),
   * else a new read's (shared while it runs); null when there is no answer yet and the first read
   * has not answered within `firstWaitMs`.
   * @throws the read's error when the caller waited for that read
   */
  get(): Promise<T | null> {
    const now = this.clock.now();
    const last = this.last;
    if (last && now >= last.at && now - last.at < Math.max(this.minAgeMs, last.tookMs / this.dutyCycle)) return Promise.resolve(last.value);
    const serveStale = last !== null && last.tookMs >= this.serveStaleAboveMs;
    const pending = this.inFlight ?? this.start(now);
    if (serveStale) {
      pending.catch(() => undefined); // dropped: the next call reads again
      return Promise.resolve(last.value);
    }
    if (last === null && Number.isFinite(this.firstWaitMs)) return this.boundedWait(pending);
    return pending;
  }

  /** `pending`'s answer, or null once `firstWaitMs` has passed on the clock (the read goes on). */
  private boundedWait(pending: Promise<T>): Promise<T | null> {
    return new Promise<T | null>((resolve, reject) => {
      const timer = this.clock.setTimeout(() => {
        pending.catch(() => undefined); // dropped: the next call reads again
        resolve(null);
      }, this.firstWaitMs);
      pending.then(
        (value) => {
          this.clock.clearTimeout(timer);
          resolve(value);
        },
        (err: unknown) => {
          this.clock.clearTimeout(timer);
          reject(err);
        },
      );
    });
  }

  private start(started: number): Promise<T> {
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
