/**
 * Figures over start instants (epoch ms, from the tasks' `started_at`): the most starts in any
 * sliding window, starts per fixed bucket, and the share of two tenants over a common interval.
 * Pure functions; the scenarios feed them the read-back tasks.
 */
import { round } from '../stats';

/**
 * The most instants inside any half-open window `[x, x + windowMs)`, over every real x. The
 * maximum is reached with x at one of the instants, so a two-pointer pass over the sorted
 * instants finds it.
 * @param sorted instants (ms), ascending
 * @returns the count and the start of one window that holds it (null when there are none)
 */
export function maxInSlidingWindow(sorted: number[], windowMs: number): { count: number; window_start_ms: number | null } {
  let best = 0;
  let at: number | null = null;
  let j = 0;
  for (let i = 0; i < sorted.length; i++) {
    if (j < i) j = i;
    while (j < sorted.length && sorted[j] < sorted[i] + windowMs) j++;
    if (j - i > best) {
      best = j - i;
      at = sorted[i];
    }
  }
  return { count: best, window_start_ms: at };
}

/** Instants per consecutive bucket of `bucketMs` from `origin` (ms) up to the last instant. */
export function perBucket(instants: number[], origin: number, bucketMs: number): number[] {
  if (instants.length === 0) return [];
  const last = Math.floor((minMax(instants).max - origin) / bucketMs);
  const out = new Array<number>(Math.max(0, last + 1)).fill(0);
  for (const t of instants) {
    const b = Math.floor((t - origin) / bucketMs);
    if (b >= 0) out[b]++;
  }
  return out;
}

/** Counts of `a` and `b` instants in `[from, to]` and their ratio a ÷ b (null when b has none). */
export function shareIn(a: number[], b: number[], from: number, to: number): { a: number; b: number; ratio: number | null } {
  const inside = (t: number) => t >= from && t <= to;
  const na = a.filter(inside).length;
  const nb = b.filter(inside).length;
  return { a: na, b: nb, ratio: nb > 0 ? round(na / nb, 3) : null };
}

/** Smallest and largest of a non-empty array (no spread: safe for 100,000 elements). */
export function minMax(values: number[]): { min: number; max: number } {
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return { min, max };
}
