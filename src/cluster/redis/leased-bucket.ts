import type { Clock } from '../../domain/clock';
import type { LimitKind, RateBucket, RateLimit } from '../../domain/rate-limiter-backend';
import { TokenBucket } from '../../domain/token-bucket';

/** Where a {@link LeasedBucket} gets its tokens: the shared bucket of one limit (Redis). */
export interface TokenSource {
  /** False while the source is known to be unreachable (no request is then made). */
  readonly up: boolean;
  /**
   * Takes up to `wanted` tokens. @returns how many were granted (0..wanted) and, when none is
   * left, in how many ms the next one comes (0 otherwise). Rejects when unreachable.
   */
  take(wanted: number): Promise<{ granted: number; waitMs: number }>;
  /** Gives back unused tokens (best effort). */
  give(count: number): Promise<void>;
}

/** Lease tuning; durations in ms. */
export interface LeaseOptions {
  /** Tokens asked for at once (≥ 1; capped at the burst). */
  batch: number;
  /** Leased tokens unused after this long go back to the shared bucket. */
  leaseTtlMs: number;
  /** After a failed request, local limits apply for this long before Redis is tried again. */
  retryAfterMs: number;
}

/** What a {@link LeasedBucket} reports (metrics). */
export interface LeaseEvents {
  lease(kind: LimitKind, result: 'granted' | 'empty' | 'failed'): void;
  fallback(kind: LimitKind): void;
}

/**
 * A {@link RateBucket} whose tokens come from a bucket shared by every node (cluster mode,
 * docs/DESIGN.md §5), without making a start wait on Redis: the node leases tokens in small batches into
 * a local stock that the dispatcher spends synchronously. Below half a batch it asks for the next
 * one (one request at a time); when the stock is empty it answers Infinity meanwhile; the reply calls
 * `wake`, so the dispatcher looks again. A reply with no token carries the ETA of the next one,
 * which {@link nextTokenAt} returns: the parked queue's timer is set to it.
 *
 * Bound: leased tokens were taken from the shared bucket, so the cluster's starts over any
 * interval T are at most burst + rate × T, plus the stock held when T began (≤ one batch per
 * node, and a stock older than `leaseTtlMs` is given back unused).
 *
 * While the source is down (or after a failed request, for `retryAfterMs`), the local
 * {@link TokenBucket} of the same limit decides, and each start it allows is counted: the limit
 * then holds per node.
 */
export class LeasedBucket implements RateBucket {
  readonly ratePerSecond: number;
  readonly burst: number;
  private readonly local: TokenBucket;
  private stock = 0;
  private stockUntil = 0;
  /** Local time before which the shared bucket said no token is there. */
  private emptyUntil = 0;
  private localUntil = 0;
  private inFlight = false;

  /**
   * @param limit the rate (tokens/s) and burst
   * @param now creation time, epoch ms on `clock`
   * @param clock the scheduler's clock (to place an ETA and a lease's age)
   * @param wake called when a reply may let a parked queue start
   */
  constructor(
    private readonly kind: LimitKind,
    limit: RateLimit,
    now: number,
    private readonly source: TokenSource,
    private readonly clock: Clock,
    private readonly options: LeaseOptions,
    private readonly wake: () => void,
    private readonly events?: LeaseEvents,
  ) {
    this.ratePerSecond = limit.ratePerSecond;
    this.burst = limit.burst;
    this.local = new TokenBucket(limit.ratePerSecond, limit.burst, now);
  }

  tryTake(now: number, n = 1): boolean {
    if (this.useLocal(now)) {
      const ok = this.local.tryTake(now, n);
      if (ok) this.events?.fallback(this.kind);
      return ok;
    }
    this.expire(now);
    if (this.stock >= n) {
      this.stock -= n;
      // Below half a batch, the next lease is asked for already: a steady flow does not park
      // at every batch boundary (only demand leases: a bucket nobody takes from asks nothing).
      if (this.stock < Math.ceil(this.options.batch / 2)) this.request(1);
      return true;
    }
    this.request(n);
    return false;
  }

  nextTokenAt(now: number, n = 1): number {
    if (this.useLocal(now)) return this.local.nextTokenAt(now, n);
    this.expire(now);
    if (this.stock >= n) return now;
    if (this.inFlight) return Infinity;
    if (now < this.emptyUntil) return this.emptyUntil;
    this.request(n);
    return this.useLocal(now) ? this.local.nextTokenAt(now, n) : Infinity;
  }

  /**
   * Gives back `n` tokens (default 1) taken for a start that did not happen: to the local bucket
   * while it decides, else to the leased stock (which goes back to the shared bucket with the rest
   * of it when its lease ends). A token taken just before the source went down or came back goes
   * to the side deciding now: off by at most the claims in flight at that moment.
   */
  refund(now: number, n = 1): void {
    if (this.useLocal(now)) return this.local.refund(now, n);
    this.expire(now);
    this.stock += n;
  }

  /** Tokens leased and not yet spent (tests, metrics). */
  get leased(): number {
    return this.stock;
  }

  /** Gives the unused stock back (limit replaced, shutdown). */
  release(): void {
    this.giveBack();
  }

  private useLocal(now: number): boolean {
    return !this.source.up || now < this.localUntil;
  }

  /** A stock older than the lease TTL goes back to the shared bucket. */
  private expire(now: number): void {
    if (this.stock > 0 && now >= this.stockUntil) this.giveBack();
  }

  private giveBack(): void {
    const count = this.stock;
    this.stock = 0;
    if (count > 0) void this.source.give(count).catch(() => undefined);
  }

  private request(n: number): void {
    if (this.inFlight) return;
    if (!this.source.up) return;
    this.inFlight = true;
    const wanted = Math.max(n, Math.min(this.options.batch, Math.floor(this.burst)));
    this.source.take(wanted).then(
      ({ granted, waitMs }) => {
        const at = this.clock.now();
        this.inFlight = false;
        if (granted > 0) {
          this.stock += granted;
          this.stockUntil = at + this.options.leaseTtlMs;
        }
        this.emptyUntil = granted > 0 ? 0 : at + Math.max(1, waitMs);
        this.events?.lease(this.kind, granted > 0 ? 'granted' : 'empty');
        this.wake();
      },
      () => {
        this.inFlight = false;
        this.localUntil = this.clock.now() + this.options.retryAfterMs;
        this.events?.lease(this.kind, 'failed');
        this.wake();
      },
    );
  }
}
