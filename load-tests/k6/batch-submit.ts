// Batch submission: the throughput scenario of load-tests/bench-throughput.ts for k6.
//
//   k6 run -e BASE_URL=http://127.0.0.1:8080 -e TASKS=50000 -e CONCURRENCY=4 load-tests/k6/batch-submit.ts
//
// TASKS `noop` tasks in `POST /api/v1/tasks/batch` requests of BATCH_SIZE (<= 1000), CONCURRENCY
// VUs sharing the batches (so CONCURRENCY requests in flight); a 429/503 is retried after its
// Retry-After. setup() reads the /metrics baseline; teardown() polls /metrics every 100 ms until
// every task is terminal (at most COMPLETION_TIMEOUT_S) and reports e2e_completion_seconds,
// e2e_tasks_per_second and the dispatch-lag quantiles of the service's own histogram (bucket
// upper bounds, dispatch_lag_p50_le_ms / dispatch_lag_p99_le_ms). Use a fresh SQLITE_PATH.
import http from 'k6/http';
import { check, sleep } from 'k6';
import exec from 'k6/execution';
import { Counter, Gauge, Trend } from 'k6/metrics';
import type { Options } from 'k6/options';

// k6 has a console; @types/k6 does not declare it (module-local, so Node's is not redeclared).
declare const console: { log(...args: unknown[]): void };

const BASE_URL = (__ENV.BASE_URL || 'http://127.0.0.1:8080').replace(/\/+$/, '');
const TASKS = parseInt(__ENV.TASKS || '50000', 10);
const BATCH_SIZE = Math.min(1000, parseInt(__ENV.BATCH_SIZE || '1000', 10));
const CONCURRENCY = parseInt(__ENV.CONCURRENCY || '4', 10);
const COMPLETION_TIMEOUT_S = parseInt(__ENV.COMPLETION_TIMEOUT_S || '240', 10);
const BATCHES = Math.ceil(TASKS / BATCH_SIZE);

export const options: Options = {
  scenarios: {
    submit_batches: {
      executor: 'shared-iterations',
      vus: Math.min(CONCURRENCY, BATCHES),
      iterations: BATCHES,
      maxDuration: '5m',
      exec: 'submitBatch',
    },
  },
  thresholds: {
    'http_req_duration{name:submit_batch}': ['p(95)<500'],
    http_req_failed: ['rate<0.01'],
    checks: ['rate>0.99'],
    tasks_acknowledged: [`count>=${TASKS}`],
  },
  setupTimeout: '60s',
  teardownTimeout: `${COMPLETION_TIMEOUT_S + 30}s`,
  summaryTrendStats: ['avg', 'min', 'med', 'p(90)', 'p(95)', 'p(99)', 'max'],
};

const tasksAcknowledged = new Counter('tasks_acknowledged');
const e2eSeconds = new Trend('e2e_completion_seconds');
const e2eRate = new Gauge('e2e_tasks_per_second');
const lagP50 = new Gauge('dispatch_lag_p50_le_ms');
const lagP99 = new Gauge('dispatch_lag_p99_le_ms');

function batchBody(size: number): string {
  const tasks = [];
  for (let i = 0; i < size; i++) tasks.push({ task_type: 'noop' });
  return JSON.stringify({ tasks });
}
// Built once per VU (init context), not per iteration.
const FULL_BODY = batchBody(BATCH_SIZE);
const LAST_SIZE = TASKS - (BATCHES - 1) * BATCH_SIZE;
const LAST_BODY = LAST_SIZE === BATCH_SIZE ? FULL_BODY : batchBody(LAST_SIZE);
const HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json' };

interface Scrape {
  completed: Record<string, number>;
  terminal: number;
  buckets: Record<string, number>;
  lagCount: number;
}

/** Terminal noop tasks by status and the dispatch-lag histogram, from one /metrics scrape. */
function readMetrics(): Scrape {
  const res = http.get(`${BASE_URL}/metrics`, { tags: { name: 'metrics' }, timeout: '10s' });
  if (res.status !== 200) throw new Error(`GET /metrics: HTTP ${res.status}`);
  const completed: Record<string, number> = {};
  const buckets: Record<string, number> = {};
  let lagCount = 0;
  for (const line of String(res.body).split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
    let l: RegExpExecArray | null;
    while ((l = re.exec(m[2] || '')) !== null) labels[l[1]] = l[2];
    const value = Number(m[3]);
    if (m[1] === 'scheduler_tasks_completed_total' && labels.task_type === 'noop')
      completed[labels.status] = (completed[labels.status] || 0) + value;
    else if (m[1] === 'scheduler_dispatch_lag_seconds_bucket') buckets[labels.le] = value;
    else if (m[1] === 'scheduler_dispatch_lag_seconds_count') lagCount = value;
  }
  let terminal = 0;
  for (const s of ['SUCCEEDED', 'FAILED', 'DEAD', 'CANCELLED']) terminal += completed[s] || 0;
  return { completed, terminal, buckets, lagCount };
}

/** Upper bound (ms) of the histogram bucket holding quantile q of the observations between two scrapes. */
function bucketQuantile(before: Scrape, after: Scrape, q: number): number | null {
  const count = after.lagCount - before.lagCount;
  if (count <= 0) return null;
  const les = Object.keys(after.buckets)
    .filter((le) => le !== '+Inf')
    .map(Number)
    .sort((a, b) => a - b);
  for (const le of les) {
    if ((after.buckets[String(le)] || 0) - (before.buckets[String(le)] || 0) >= q * count) return le * 1000;
  }
  return null; // in the +Inf bucket
}

export function setup(): { baseline: Scrape; startedAt: number } {
  const ready = http.get(`${BASE_URL}/readyz`, { tags: { name: 'readyz' } });
  if (ready.status !== 200) throw new Error(`${BASE_URL}/readyz answered ${ready.status}: is the service running?`);
  return { baseline: readMetrics(), startedAt: Date.now() };
}

export function submitBatch(): void {
  // shared-iterations: iterationInTest counts across VUs; the last one sends the remainder.
  const body = exec.scenario.iterationInTest === BATCHES - 1 ? LAST_BODY : FULL_BODY;
  let res = http.post(`${BASE_URL}/api/v1/tasks/batch`, body, { headers: HEADERS, tags: { name: 'submit_batch' }, timeout: '60s' });
  for (let tries = 1; tries < 20 && (res.status === 429 || res.status === 503); tries++) {
    const ra = Number(res.headers['Retry-After']); // backpressure: wait, then the same batch again
    sleep(Number.isFinite(ra) && ra > 0 ? Math.min(ra, 5) : 0.25);
    res = http.post(`${BASE_URL}/api/v1/tasks/batch`, body, { headers: HEADERS, tags: { name: 'submit_batch' }, timeout: '60s' });
  }
  let acked = 0;
  const ok = check(res, {
    'batch: status 202': (r) => r.status === 202,
    'batch: one ack per task': (r) => {
      if (r.status !== 202) return false;
      acked = (r.json('tasks') as unknown[]).length;
      return acked > 0;
    },
  });
  if (ok) tasksAcknowledged.add(acked);
}

export function teardown(data: { baseline: Scrape; startedAt: number }): void {
  const deadline = Date.now() + COMPLETION_TIMEOUT_S * 1000;
  let now = readMetrics();
  while (now.terminal - data.baseline.terminal < TASKS && Date.now() < deadline) {
    sleep(0.1);
    now = readMetrics();
  }
  const done = now.terminal - data.baseline.terminal;
  const seconds = (Date.now() - data.startedAt) / 1000;
  const succeeded = (now.completed.SUCCEEDED || 0) - (data.baseline.completed.SUCCEEDED || 0);
  check(done, { 'all submitted tasks reached a terminal state': (d) => d >= TASKS });
  check(succeeded, { 'all submitted tasks SUCCEEDED': (s) => s >= TASKS });
  if (done >= TASKS) {
    e2eSeconds.add(seconds);
    e2eRate.add(TASKS / seconds);
  }
  const p50 = bucketQuantile(data.baseline, now, 0.5);
  const p99 = bucketQuantile(data.baseline, now, 0.99);
  if (p50 !== null) lagP50.add(p50);
  if (p99 !== null) lagP99.add(p99);
  console.log(
    `end-to-end: ${done}/${TASKS} terminal (${succeeded} SUCCEEDED) in ${seconds.toFixed(2)} s` +
      (done >= TASKS ? ` = ${Math.round(TASKS / seconds)} tasks/s` : ' (timed out)') +
      `; dispatch lag p50 <= ${p50} ms, p99 <= ${p99} ms (service histogram buckets)`,
  );
}
