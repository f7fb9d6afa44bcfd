/**
 * Statistics of the figures: nearest-rank percentiles, the median, rounding, the Distribution summary
 * (count, p50/p90/p99, min/max/mean) and random sampling without replacement.
 */

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: number[], q: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1];
}

/**
 * Median of the finite numbers in `values` (the mean of the middle two for an even count);
 * null when there are none.
 */
export function median(values: ReadonlyArray<number | null | undefined>): number | null {
  const s = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v)).sort((a, b) => a - b);
  if (s.length === 0) return null;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

export const round = (n: number | null, digits = 1): number | null =>
  n === null || !Number.isFinite(n) ? null : Number(n.toFixed(digits));

export interface Distribution {
  count: number;
  p50_ms: number | null;
  p90_ms: number | null;
  p99_ms: number | null;
  max_ms: number | null;
  min_ms: number | null;
  mean_ms: number | null;
}

export function distribution(values: number[]): Distribution {
  const s = [...values].sort((a, b) => a - b);
  const mean = s.length ? s.reduce((a, b) => a + b, 0) / s.length : null;
  return {
    count: s.length,
    p50_ms: round(percentile(s, 0.5)),
    p90_ms: round(percentile(s, 0.9)),
    p99_ms: round(percentile(s, 0.99)),
    max_ms: round(s.length ? s[s.length - 1] : null),
    min_ms: round(s.length ? s[0] : null),
    mean_ms: round(mean),
  };
}

/** k distinct random elements (all of them when k ≥ length), partial Fisher–Yates. */
export function sample<T>(items: T[], k: number): T[] {
  const a = [...items];
  const n = Math.min(k, a.length);
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(Math.random() * (a.length - i));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a.slice(0, n);
}
