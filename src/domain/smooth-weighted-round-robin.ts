/**
 * Smooth weighted round-robin (nginx's upstream algorithm, `ngx_http_upstream_get_peer`): each pick
 * adds every candidate's weight to its current value, picks the largest, and subtracts the total
 * from the winner. Over any window each candidate gets its share, evenly spread. Only candidates
 * passed to {@link pick} take part, so idle tenants cost nothing.
 */
export class SmoothWeightedRoundRobin {
  private current = new Map<string, number>();

  /** @param weightOf weight of a key (> 0); default 1 */
  constructor(private readonly weightOf: (key: string) => number = () => 1) {}

  /** Picks one of `candidates` (non-empty); returns undefined for an empty list. */
  pick(candidates: Iterable<string>): string | undefined {
    let best: string | undefined;
    let bestValue = -Infinity;
    let total = 0;
    for (const key of candidates) {
      const w = this.weightOf(key);
      total += w;
      const value = (this.current.get(key) ?? 0) + w;
      this.current.set(key, value);
      if (value > bestValue) {
        bestValue = value;
        best = key;
      }
    }
    if (best !== undefined) this.current.set(best, bestValue - total);
    return best;
  }

  /** Forgets a key that has no more work (its credit restarts at 0). */
  forget(key: string): void {
    this.current.delete(key);
  }
}
