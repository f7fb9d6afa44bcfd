/**
 * What the soak samples: one /metrics scrape read for the soak's series (terminal tasks by task
 * type and status, depth by state, tenant S's dispatch-lag histogram, the event-loop delay since
 * the previous scrape, the main process's V8 heap in use and committed), the process tree's RSS from /proc, the store's file sizes, and the
 * read-back of a random sample of the steady tenant's tasks per interval (dispatch lag =
 * started_at − due_at, exact to the ms).
 */
import type { HttpClient } from '../http-client';
import { histogramBuckets, parseMetrics } from '../metrics';
import { readMem } from '../proc-sampler';
import { mapLimit } from '../run-control';
import { round } from '../stats';
import type { TaskView } from '../task-lag';

/** One scrape of the series the soak reads (counters cumulative since the service started). */
export interface SoakScrape {
  /** `task_type/status` → tasks ended so. */
  terminal: Map<string, number>;
  depth: Record<string, number>;
  /** Tenant S's dispatch-lag histogram: cumulative count by upper bound (s). */
  lagS: Map<number, number>;
  /** Longest event-loop delay of the main thread since the previous scrape (ms), null when absent. */
  eventLoopMaxMs: number | null;
  staleCompletions: number;
  /** Worker processes restarted (`scheduler_worker_restarts_total`) and killed for overrunning (`scheduler_worker_kills_total`). */
  workerRestarts: number;
  workerKills: number;
  /** V8 heap in use and external memory of the main process (bytes; null when absent). */
  heapUsedBytes: number | null;
  externalBytes: number | null;
  /**
   * V8 heap committed by the main thread's isolate (bytes; null when absent): pages it holds from
   * the OS whether in use or not. Main RSS minus this is memory outside that heap (SQLite's page
   * caches, the store threads' own isolates, allocator arenas, code).
   */
  heapTotalBytes: number | null;
}

/** Scrapes /metrics. @throws Error when it does not answer 200 */
export async function scrapeSoak(client: HttpClient): Promise<SoakScrape> {
  const res = await client.get('/metrics', 10_000);
  if (res.status !== 200) throw new Error(`GET /metrics: HTTP ${res.status}`);
  const samples = parseMetrics(res.body);
  const out: SoakScrape = {
    terminal: new Map(),
    depth: {},
    lagS: new Map(),
    eventLoopMaxMs: null,
    staleCompletions: 0,
    workerRestarts: 0,
    workerKills: 0,
    heapUsedBytes: null,
    externalBytes: null,
    heapTotalBytes: null,
  };
  for (const { name, labels, value } of samples) {
    if (name === 'scheduler_tasks_completed_total') {
      const k = `${labels.task_type}/${labels.status}`;
      out.terminal.set(k, (out.terminal.get(k) ?? 0) + value);
    } else if (name === 'scheduler_tasks' && labels.state) out.depth[labels.state] = value;
    else if (name === 'scheduler_nodejs_eventloop_lag_max_seconds' && Number.isFinite(value)) out.eventLoopMaxMs = value * 1000;
    else if (name === 'scheduler_stale_completions_total') out.staleCompletions += value;
    else if (name === 'scheduler_worker_restarts_total') out.workerRestarts += value;
    else if (name === 'scheduler_worker_kills_total') out.workerKills += value;
    else if (name === 'scheduler_nodejs_heap_size_used_bytes') out.heapUsedBytes = value;
    else if (name === 'scheduler_nodejs_external_memory_bytes') out.externalBytes = value;
    else if (name === 'scheduler_nodejs_heap_size_total_bytes') out.heapTotalBytes = value;
  }
  out.lagS = histogramBuckets(
    samples.filter((s) => s.labels.tenant === 'S'),
    'scheduler_tenant_dispatch_lag_seconds_bucket',
  );
  return out;
}

/** Tasks of `type` ended in any state, or in `status` only. */
export function terminalOf(s: SoakScrape, type: string, status?: string): number {
  let n = 0;
  for (const [k, v] of s.terminal) if (k.startsWith(`${type}/`) && (status === undefined || k === `${type}/${status}`)) n += v;
  return n;
}

/** The upper bound (ms) of the bucket holding the p99 of the observations between two histograms. */
export function histP99Ms(before: Map<number, number>, after: Map<number, number>): number | null {
  const les = [...after.keys()].sort((a, b) => a - b);
  const total = (after.get(Infinity) ?? 0) - (before.get(Infinity) ?? 0);
  if (total <= 0) return null;
  for (const le of les) if ((after.get(le) ?? 0) - (before.get(le) ?? 0) >= 0.99 * total) return Number.isFinite(le) ? le * 1000 : null;
  return null;
}

/** RSS of the service's main process and the sum over its workers (MB). */
export function treeRss(mainPid: number, workerPids: number[]): { main_mb: number | null; workers_mb: number } {
  const main = readMem(mainPid);
  const workers = workerPids.reduce((a, p) => a + (readMem(p)?.rssKb ?? 0), 0);
  return { main_mb: main ? (round(main.rssKb / 1024) as number) : null, workers_mb: round(workers / 1024) as number };
}

/** One steady task read back: when it was due and its dispatch lag (ms). */
export interface LagRecord {
  dueMs: number;
  lagMs: number;
  /** Not started when read: the lag is a lower bound (now − due). */
  notStarted: boolean;
  /**
   * started_at (or now, when not started) − the harness's send instant of its batch (ms): the lag
   * as the submitter sees it, including the wait for the acknowledgement (same clock).
   */
  sendLagMs: number;
}

/**
 * A reservoir of at most `k` steady tasks per interval (uniform over the interval's tasks);
 * rotate() closes the interval, and readBack() fetches a closed one's tasks.
 */
export class LagSampler {
  private current: Array<{ id: string; sentWall: number }> = [];
  private seen = 0;
  readonly records: LagRecord[] = [];
  fetchErrors = 0;

  constructor(private readonly k: number) {}

  offer(id: string, sentWall: number): void {
    this.seen++;
    if (this.current.length < this.k) this.current.push({ id, sentWall });
    else {
      const j = Math.floor(Math.random() * this.seen);
      if (j < this.k) this.current[j] = { id, sentWall };
    }
  }

  /** Closes the current interval. @returns its sample */
  rotate(): Array<{ id: string; sentWall: number }> {
    const out = this.current;
    this.current = [];
    this.seen = 0;
    return out;
  }

  /** Reads back a closed interval's tasks (8 in flight) into `records`. @returns the new records */
  async readBack(client: HttpClient, sample: Array<{ id: string; sentWall: number }>): Promise<LagRecord[]> {
    const got = await mapLimit(sample, 8, async ({ id, sentWall }) => {
      const res = await client.get(`/api/v1/tasks/${encodeURIComponent(id)}`);
      if (res.status !== 200) {
        this.fetchErrors++;
        return null;
      }
      const t = JSON.parse(res.body) as TaskView;
      if (!t.due_at) return null;
      const due = Date.parse(t.due_at);
      const started = t.started_at ? Date.parse(t.started_at) : Date.now();
      const rec: LagRecord = { dueMs: due, lagMs: started - due, notStarted: !t.started_at, sendLagMs: started - sentWall };
      return rec;
    });
    const recs = got.filter((r): r is LagRecord => r !== null);
    this.records.push(...recs);
    return recs;
  }
}
