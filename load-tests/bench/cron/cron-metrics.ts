/**
 * The service's own cron figures from /metrics: the `scheduler_cron_fire_lag_seconds` histogram
 * (on-time firings: when the firing was made minus its fire time) and
 * `scheduler_cron_firings_total{outcome,reason}`, scraped before and after the run, and their
 * difference. (metrics.ts parses only the task figures; this file reads the two cron series.)
 */
import type { HttpClient } from '../http-client';

const LINE_RE = /^(scheduler_cron_fire_lag_seconds_bucket|scheduler_cron_fire_lag_seconds_count|scheduler_cron_firings_total)(?:\{(.*)\})?\s+(\S+)/;
const LABEL_RE = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

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
  const snap: CronMetricsSnapshot = { lagBuckets: new Map(), lagCount: 0, firings: new Map() };
  for (const line of res.body.split('\n')) {
    const m = LINE_RE.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    if (m[2]) for (const l of m[2].matchAll(LABEL_RE)) labels[l[1]] = l[2];
    const value = Number(m[3]);
    if (m[1] === 'scheduler_cron_fire_lag_seconds_bucket' && labels.le !== undefined) {
      snap.lagBuckets.set(labels.le === '+Inf' ? Infinity : Number(labels.le), value);
    } else if (m[1] === 'scheduler_cron_fire_lag_seconds_count') {
      snap.lagCount = value;
    } else if (m[1] === 'scheduler_cron_firings_total') {
      const key = `${labels.outcome ?? '?'}/${labels.reason ?? 'none'}`;
      snap.firings.set(key, (snap.firings.get(key) ?? 0) + value);
    }
  }
  return snap;
}

/**
 * Between two scrapes: firings by `outcome/reason`, and the fire-lag quantiles as the upper bound
 * (ms) of the bucket holding each (null above the last finite bucket).
 */
export function cronMetricsDelta(before: CronMetricsSnapshot, after: CronMetricsSnapshot): Record<string, unknown> {
  const firings: Record<string, number> = {};
  for (const [k, v] of after.firings) {
    const d = v - (before.firings.get(k) ?? 0);
    if (d !== 0) firings[k] = d;
  }
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
