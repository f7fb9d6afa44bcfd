/**
 * The service's /metrics: Prometheus text parsing (parseMetrics, histogramBuckets; shared with
 * cron/cron-metrics.ts and tenants/tenant-metrics.ts), one scrape as a MetricsSnapshot (terminal
 * noop counts, queue depth by state, dispatch-lag histogram) and the histogram quantiles between
 * two scrapes.
 */
import { performance } from 'node:perf_hooks';
import type { HttpClient } from './http-client';

/** One sample line of the Prometheus text format: metric name, labels, value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE_RE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL_RE = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/**
 * Parses the Prometheus text exposition format (prom-client's /metrics): one Sample per sample
 * line; comments (# HELP, # TYPE), blank and unparsable lines are skipped. `+Inf` reads as
 * Infinity; label values keep their escapes.
 */
export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = SAMPLE_RE.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    if (m[2]) for (const l of m[2].matchAll(LABEL_RE)) labels[l[1]] = l[2];
    const value = m[3] === '+Inf' ? Infinity : Number(m[3]);
    out.push({ name: m[1], labels, value });
  }
  return out;
}

/** A histogram's cumulative bucket counts by upper bound `le` (seconds; Infinity for +Inf). */
export function histogramBuckets(samples: Sample[], bucketName: string): Map<number, number> {
  const buckets = new Map<number, number>();
  for (const s of samples) {
    if (s.name === bucketName && s.labels.le !== undefined) buckets.set(s.labels.le === '+Inf' ? Infinity : Number(s.labels.le), s.value);
  }
  return buckets;
}

/** The sum of the samples named `name` whose labels include `labels` (0 when none). */
export function metricValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (Object.entries(labels).every(([k, v]) => s.labels[k] === v)) sum += s.value;
  }
  return sum;
}

export const TERMINAL = ['SUCCEEDED', 'FAILED', 'DEAD', 'CANCELLED'] as const;
type Terminal = (typeof TERMINAL)[number];
export type TerminalCounts = Record<Terminal, number>;

export interface MetricsSnapshot {
  at: number; // performance.now() when the scrape answer arrived
  completed: TerminalCounts; // noop tasks by terminal state
  depth: Record<string, number>; // scheduler_tasks{state}
  lagBuckets: Map<number, number>; // scheduler_dispatch_lag_seconds_bucket by le (cumulative)
  lagCount: number;
  scrapeMs: number;
  /**
   * `scheduler_last_task_finished_timestamp_seconds` in epoch ms: when the service last had an
   * attempt that ended its task committed; null when the service does not export it (older
   * builds) or nothing has finished yet.
   */
  lastFinishedMs: number | null;
}

export async function scrape(client: HttpClient): Promise<MetricsSnapshot> {
  const t0 = performance.now();
  const res = await client.get('/metrics', 10_000);
  const at = performance.now();
  if (res.status !== 200) throw new Error(`GET /metrics: HTTP ${res.status}`);
  const samples = parseMetrics(res.body);
  const completed = {} as TerminalCounts;
  for (const st of TERMINAL) completed[st] = metricValue(samples, 'scheduler_tasks_completed_total', { task_type: 'noop', status: st });
  const depth: Record<string, number> = {};
  for (const s of samples) if (s.name === 'scheduler_tasks' && s.labels.state) depth[s.labels.state] = s.value;
  const lagBuckets = histogramBuckets(samples, 'scheduler_dispatch_lag_seconds_bucket');
  const finished = samples.find((x) => x.name === 'scheduler_last_task_finished_timestamp_seconds')?.value;
  const lastFinishedMs = finished === undefined || finished <= 0 ? null : Math.round(finished * 1000);
  return {
    at,
    completed,
    depth,
    lagBuckets,
    lagCount: metricValue(samples, 'scheduler_dispatch_lag_seconds_count'),
    scrapeMs: at - t0,
    lastFinishedMs,
  };
}

/**
 * Quantiles of the service's own dispatch-lag histogram between two scrapes (every attempt that
 * started in between, including other scenarios' stragglers): the upper bound of the bucket that
 * holds the quantile, in ms.
 */
export function histogramDelta(
  before: MetricsSnapshot,
  after: MetricsSnapshot,
): { count: number; p50_le_ms: number | null; p99_le_ms: number | null; max_le_ms: number | null } {
  const les = [...after.lagBuckets.keys()].sort((a, b) => a - b);
  const delta = les.map((le) => ({ le, n: (after.lagBuckets.get(le) ?? 0) - (before.lagBuckets.get(le) ?? 0) }));
  const count = after.lagCount - before.lagCount;
  const q = (p: number): number | null => {
    if (count <= 0) return null;
    const want = p * count;
    for (const d of delta) if (d.n >= want) return Number.isFinite(d.le) ? d.le * 1000 : null;
    return null;
  };
  let maxLe: number | null = null;
  for (const d of delta) {
    if (d.n >= count && count > 0) {
      maxLe = Number.isFinite(d.le) ? d.le * 1000 : null;
      break;
    }
  }
  return { count, p50_le_ms: q(0.5), p99_le_ms: q(0.99), max_le_ms: maxLe };
}

export const sumCounts = (c: TerminalCounts): number => TERMINAL.reduce((a, s) => a + c[s], 0);
export const diffCounts = (a: TerminalCounts, b: TerminalCounts): TerminalCounts => {
  const out = {} as TerminalCounts;
  for (const s of TERMINAL) out[s] = a[s] - b[s];
  return out;
};

/** Every key whose counter changed between two scrapes, with the change (after − before). */
export function deltas(after: Map<string, number>, before: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of after) {
    const d = v - (before.get(k) ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}
