/**
 * A token bucket (the classic traffic-shaping algorithm, as in RFC 2697's and RFC 4115's meters):
 * `ratePerSecond` tokens are added continuously up to `burst`; each start takes one. Pure: the
 * caller passes `now` (epoch ms). A clock that steps back adds nothing and takes nothing away.
 */
export class TokenBucket {
  private tokens: number;
  private refilledAt: number;

  /**
   * @param ratePerSecond tokens per second (> 0)
   * @param burst bucket size (≥ 1): how many starts may happen at once after a quiet period
   * @param now creation time; the bucket starts full
   * @throws RangeError for a rate ≤ 0 or a burst < 1
   */
  constructor(
    readonly ratePerSecond: number,
    readonly burst: number,
    now: number,
  ) {
    if (!(ratePerSecond > 0) || !Number.isFinite(ratePerSecond)) throw new RangeError(`ratePerSecond must be > 0, got ${ratePerSecond}`);
    if (!(burst >= 1) || !Number.isFinite(burst)) throw new RangeError(`burst must be ≥ 1, got ${burst}`);
    this.tokens = burst;
    this.refilledAt = now;
  }

  /**
   * Takes `n` tokens (default 1) if there are enough: `n`, or a full bucket for `n` larger than
   * the burst (the bucket then goes into debt, so the long-run rate still holds).
   */
  tryTake(now: number, n = 1): boolean {
    this.refill(now);
    if (this.tokens < Math.min(n, this.burst)) return false;
    this.tokens -= n;
    return true;
  }

  /** When `n` tokens (default 1; at most the burst) will be there (≤ now when they are already). */
  nextTokenAt(now: number, n = 1): number {
    this.refill(now);
    const need = Math.min(n, this.burst);
    if (this.tokens >= need) return now;
    return this.refilledAt + Math.ceil(((need - this.tokens) * 1000) / this.ratePerSecond);
  }

  /** Gives back `n` tokens (default 1) taken for a start that did not happen; never above the burst. */
  refund(now: number, n = 1): void {
    this.refill(now);
    this.tokens = Math.min(this.burst, this.tokens + n);
  }

  private refill(now: number): void {
    if (now <= this.refilledAt) {
      // Time stood still, or the clock went back (an NTP step): nothing to add, and the refill
      // counts from the new reading. Kept at the old one, nothing was added until the clock
      // caught up with it: a step back of an hour held every start (and submission) for an hour.
      this.refilledAt = now;
      return;
    }
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.refilledAt) * this.ratePerSecond) / 1000);
    this.refilledAt = now;
  }
}
