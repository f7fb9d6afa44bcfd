/**
 * The service's /metrics as bench-tenants reads it: terminal tasks per task type
 * (`scheduler_tasks_completed_total{task_type,status}`), attempts started per tenant
 * (`scheduler_tenant_dispatched_total{tenant}`), ready depth per tenant
 * (`scheduler_tenant_ready_tasks{tenant}`), depth by state (`scheduler_tasks{state}`), the
 * token-bucket waits (`scheduler_rate_limit_waits_total{limit,key}`), and the longest event-loop
 * delay of the service's main thread since the previous scrape (prom-client's
 * `nodejs_eventloop_lag_max_seconds`: its histogram is reset at each scrape). metrics.ts reads
 * only the noop figures; this file reads these series for any task type and tenant (with
 * metrics.ts's parser), and waits on them.
 */
import { performance } from 'node:perf_hooks';
import type { HttpClient } from '../http-client';
import { parseMetrics } from '../metrics';
import { checkAborted, sleep } from '../run-control';

export { deltas } from '../metrics';

/** One scrape. Counters are cumulative since the service started. */
export interface TenantSnapshot {
  /** performance.now() when the answer arrived. */
  at: number;
  /** Date.now() when the answer arrived (to compare with the service's ISO times). */
  wall: number;
  /** task_type → tasks ended in any terminal state. */
  terminal: Map<string, number>;
  /** tenant → attempts started. */
  dispatched: Map<string, number>;
  /** tenant → tasks in the dispatcher's ready queues now. */
  ready: Map<string, number>;
  /** state → tasks in that state now. */
  depth: Map<string, number>;
  /** `limit/key` → times a queue found its token bucket empty. */
  rateLimitWaits: Map<string, number>;
  /** Longest event-loop delay of the service's main thread since the previous scrape (ms). */
  eventLoopMaxMs: number | null;
}

const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);

/** One scrape of the series above. @throws Error when /metrics does not answer 200 */
export async function scrapeTenants(client: HttpClient): Promise<TenantSnapshot> {
  const res = await client.get('/metrics', 10_000);
  const snap: TenantSnapshot = {
    at: performance.now(),
    wall: Date.now(),
    terminal: new Map(),
    dispatched: new Map(),
    ready: new Map(),
    depth: new Map(),
    rateLimitWaits: new Map(),
    eventLoopMaxMs: null,
  };
  if (res.status !== 200) throw new Error(`GET /metrics: HTTP ${res.status}`);
  for (const { name, labels, value } of parseMetrics(res.body)) {
    if (name === 'scheduler_tasks_completed_total') add(snap.terminal, labels.task_type ?? '?', value);
    else if (name === 'scheduler_tenant_dispatched_total') add(snap.dispatched, labels.tenant ?? '?', value);
    else if (name === 'scheduler_tenant_ready_tasks') add(snap.ready, labels.tenant ?? '?', value);
    else if (name === 'scheduler_tasks' && labels.state) add(snap.depth, labels.state, value);
    else if (name === 'scheduler_rate_limit_waits_total') add(snap.rateLimitWaits, `${labels.limit ?? '?'}/${labels.key ?? '?'}`, value);
    else if (name === 'scheduler_nodejs_eventloop_lag_max_seconds' && Number.isFinite(value)) snap.eventLoopMaxMs = value * 1000;
  }
  return snap;
}

/** Increase of a counter between two scrapes (0 when absent). */
export const delta = (after: Map<string, number>, before: Map<string, number>, key: string): number =>
  (after.get(key) ?? 0) - (before.get(key) ?? 0);

/**
 * Polls /metrics every `pollMs` until `done(snapshot)` is true; `onScrape` sees every scrape.
 * Fails when `progress(snapshot)` has not changed for `stallMs`. The instant returned is the
 * arrival of the scrape that first satisfied `done`: late by at most one poll plus one scrape.
 * @returns that scrape and the number of polls
 * @throws Error on a stall, a failed scrape or the run's abort
 */
export async function pollUntil(
  client: HttpClient,
  pollMs: number,
  done: (s: TenantSnapshot) => boolean,
  progress: (s: TenantSnapshot) => number,
  onScrape: (s: TenantSnapshot) => void = () => undefined,
  stallMs = 30_000,
): Promise<{ snap: TenantSnapshot; polls: number }> {
  let polls = 0;
  let last = -1;
  let lastMoved = performance.now();
  for (;;) {
    checkAborted();
    const started = performance.now();
    const snap = await scrapeTenants(client);
    polls++;
    onScrape(snap);
    if (done(snap)) return { snap, polls };
    const p = progress(snap);
    if (p !== last) {
      last = p;
      lastMoved = snap.at;
    } else if (snap.at - lastMoved > stallMs) {
      throw new Error(`no progress for ${stallMs / 1000} s (at ${p}); depth ${JSON.stringify(Object.fromEntries(snap.depth))}`);
    }
    await sleep(pollMs - (performance.now() - started));
  }
}
