/**
 * The service's own cron figures from /metrics: the `scheduler_cron_fire_lag_seconds` histogram
 * (on-time firings: when the firing was made minus its fire time) and
 * `scheduler_cron_firings_total{outcome,reason}`, scraped before and after the run, and their
 * difference. (metrics.ts reads the task figures; this file reads the two cron series with its
 * parser.)
 */
import type { HttpClient } from '../http-client';
import { deltas, histogramBuckets, metricValue, parseMetrics } from '../metrics';

export interface CronMetricsSnapshot {
  /** Cumulative bucket counts by upper bound (s; Infinity for +Inf). */
  lagBuckets: Map<number, number>;
  lagCount: number;
  /** `outcome/reason` → count. */
  firings: Map<string, number>;
}

/** One scrape of the two cron series. @throws Error when /metrics does not answer 200 */
export async function scrapeCron(client: HttpClient): Promise<CronMetricsSnapshot> {
  const res = await client.get('/metrics', 10_000);
  if (res.status !== 200) throw new Error(`GET /metrics: HTTP ${res.status}`);
  const samples = parseMetrics(res.body);
  const snap: CronMetricsSnapshot = {
    lagBuckets: histogramBuckets(samples, 'scheduler_cron_fire_lag_seconds_bucket'),
    lagCount: metricValue(samples, 'scheduler_cron_fire_lag_seconds_count'),
    firings: new Map(),
  };
  for (const s of samples) {
    if (s.name !== 'scheduler_cron_firings_total') continue;
    const key = `${s.labels.outcome ?? '?'}/${s.labels.reason ?? 'none'}`;
    snap.firings.set(key, (snap.firings.get(key) ?? 0) + s.value);
  }
  return snap;
}

/**
 * Between two scrapes: firings by `outcome/reason`, and the fire-lag quantiles as the upper bound
 * (ms) of the bucket holding each (null above the last finite bucket).
 */
export function cronMetricsDelta(before: CronMetricsSnapshot, after: CronMetricsSnapshot): Record<string, unknown> {
  const firings = deltas(after.firings, before.firings);
  const les = [...after.lagBuckets.keys()].sort((a, b) => a - b);
  const count = after.lagCount - before.lagCount;
  const q = (p: number): number | null => {
    if (count <= 0) return null;
    for (const le of les) {
      const n = (after.lagBuckets.get(le) ?? 0) - (before.lagBuckets.get(le) ?? 0);
      if (n >= p * count) return Number.isFinite(le) ? Math.round(le * 1000 * 1000) / 1000 : null;
    }
    return null;
  };
  return { firings_by_outcome_reason: firings, fire_lag_histogram: { count, p50_le_ms: q(0.5), p99_le_ms: q(0.99), max_le_ms: q(1) } };
}
