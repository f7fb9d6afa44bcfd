// The midnight thundering herd: HERD_TASKS (100,000) tasks all due at the same second, submitted
// ahead of it in batches, then how late each started.
//
//   k6 run -e BASE_URL=http://127.0.0.1:8080 -e HERD_TASKS=100000 -e LEAD_S=90 load-tests/k6/midnight-herd.ts
//   k6 run -e BASE_URL=... -e HERD_AT=2030-01-01T00:00:00Z load-tests/k6/midnight-herd.ts
//
// setup() picks the instant: HERD_AT, or the first whole second at least LEAD_S (60) seconds
// ahead; the submission must finish before it (herd_acked_after_due counts batches that did
// not). The tasks go to a queue of their own (`herd-<instant>`) in `POST /api/v1/tasks/batch`
// requests of BATCH_SIZE, CONCURRENCY VUs. teardown() waits for the instant, polls /metrics until
// HERD_TASKS more noop tasks are terminal (COMPLETION_TIMEOUT_S), then reads LATENESS_SAMPLE
// tasks of the queue (`GET /api/v1/tasks?queue=…`, newest first) for
// herd_start_lateness_ms = started_at − the instant, and herd_started_early (must be 0).
import http from 'k6/http';
import { check, sleep } from 'k6';
import { Counter, Trend } from 'k6/metrics';
import type { Options } from 'k6/options';

declare const console: { log(...args: unknown[]): void };

const BASE_URL = (__ENV.BASE_URL || 'http://127.0.0.1:8080').replace(/\/+$/, '');
const HERD_TASKS = parseInt(__ENV.HERD_TASKS || '100000', 10);
const BATCH_SIZE = Math.min(1000, parseInt(__ENV.BATCH_SIZE || '1000', 10));
const CONCURRENCY = parseInt(__ENV.CONCURRENCY || '8', 10);
const LEAD_S = parseFloat(__ENV.LEAD_S || '60');
const COMPLETION_TIMEOUT_S = parseInt(__ENV.COMPLETION_TIMEOUT_S || '600', 10);
const LATENESS_SAMPLE = parseInt(__ENV.LATENESS_SAMPLE || '1000', 10);
const BATCHES = Math.ceil(HERD_TASKS / BATCH_SIZE);

export const options: Options = {
  scenarios: {
    submit_herd: {
      executor: 'shared-iterations',
      vus: Math.min(CONCURRENCY, BATCHES),
      iterations: BATCHES,
      maxDuration: '10m',
      exec: 'submitHerdBatch',
    },
  },
  thresholds: {
    'http_req_duration{name:submit_herd_batch}': ['p(95)<1000'],
    http_req_failed: ['rate<0.01'],
    checks: ['rate>0.99'],
    herd_acked_after_due: ['count<1'],
    herd_start_lateness_ms: ['p(50)<10000', 'p(99)<30000'],
    herd_started_early: ['count<1'],
  },
  setupTimeout: '60s',
  teardownTimeout: `${Math.ceil(LEAD_S) + COMPLETION_TIMEOUT_S + 120}s`,
  summaryTrendStats: ['avg', 'min', 'med', 'p(90)', 'p(95)', 'p(99)', 'max'],
};

const ackedAfterDue = new Counter('herd_acked_after_due');
const lateness = new Trend('herd_start_lateness_ms');
const startedEarly = new Counter('herd_started_early');
const drainSeconds = new Trend('herd_drain_seconds');
const HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json' };

interface HerdData {
  at: string;
  atMs: number;
  queue: string;
  terminalBefore: number;
}

/** Terminal noop tasks so far, from /metrics. */
function terminalNoop(): number {
  const res = http.get(`${BASE_URL}/metrics`, { tags: { name: 'metrics' }, timeout: '10s' });
  if (res.status !== 200) throw new Error(`GET /metrics: HTTP ${res.status}`);
  let n = 0;
  for (const line of String(res.body).split('\n')) {
    if (line.indexOf('scheduler_tasks_completed_total{') !== 0 || line.indexOf('task_type="noop"') < 0) continue;
    if (/status="(SUCCEEDED|FAILED|DEAD|CANCELLED)"/.test(line)) n += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return n;
}

export function setup(): HerdData {
  const ready = http.get(`${BASE_URL}/readyz`, { tags: { name: 'readyz' } });
  if (ready.status !== 200) throw new Error(`${BASE_URL}/readyz answered ${ready.status}: is the service running?`);
  const atMs = __ENV.HERD_AT ? Date.parse(__ENV.HERD_AT) : Math.ceil((Date.now() + LEAD_S * 1000) / 1000) * 1000;
  if (!Number.isFinite(atMs)) throw new Error(`HERD_AT ${__ENV.HERD_AT} is not an ISO-8601 instant`);
  const at = new Date(atMs).toISOString();
  console.log(`herd: ${HERD_TASKS} tasks due at ${at}, queue herd-${atMs}`);
  return { at, atMs, queue: `herd-${atMs}`, terminalBefore: terminalNoop() };
}

export function submitHerdBatch(data: HerdData): void {
  const tasks = [];
  for (let i = 0; i < BATCH_SIZE; i++) tasks.push({ task_type: 'noop', scheduled_at: data.at, queue: data.queue });
  const body = JSON.stringify({ tasks });
  let res = http.post(`${BASE_URL}/api/v1/tasks/batch`, body, { headers: HEADERS, tags: { name: 'submit_herd_batch' }, timeout: '60s' });
  for (let tries = 1; tries < 20 && (res.status === 429 || res.status === 503); tries++) {
    sleep(Math.min(Number(res.headers['Retry-After']) || 0.25, 5));
    res = http.post(`${BASE_URL}/api/v1/tasks/batch`, body, { headers: HEADERS, tags: { name: 'submit_herd_batch' }, timeout: '60s' });
  }
  if (Date.now() >= data.atMs) ackedAfterDue.add(1);
  check(res, {
    'herd batch: 202': (r) => r.status === 202,
    'herd batch: all SCHEDULED': (r) =>
      r.status === 202 && (r.json('tasks') as Array<{ status: string }>).every((t) => t.status === 'SCHEDULED'),
  });
}

export function teardown(data: HerdData): void {
  // The submitted count is BATCHES × BATCH_SIZE (every batch is full).
  const expected = BATCHES * BATCH_SIZE;
  while (Date.now() < data.atMs) sleep(Math.min(1, (data.atMs - Date.now()) / 1000));
  const deadline = data.atMs + COMPLETION_TIMEOUT_S * 1000;
  let done = terminalNoop() - data.terminalBefore;
  while (done < expected && Date.now() < deadline) {
    sleep(0.2);
    done = terminalNoop() - data.terminalBefore;
  }
  const drained = (Date.now() - data.atMs) / 1000;
  check(done, { 'herd: every task terminal': (d) => d >= expected });
  if (done >= expected) drainSeconds.add(drained);
  let cursor = '';
  let read = 0;
  while (read < LATENESS_SAMPLE) {
    const limit = Math.min(1000, LATENESS_SAMPLE - read);
    const res = http.get(
      `${BASE_URL}/api/v1/tasks?queue=${encodeURIComponent(data.queue)}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { tags: { name: 'list_herd' } },
    );
    if (!check(res, { 'herd: list 200': (r) => r.status === 200 })) break;
    const page = res.json() as { tasks: Array<{ started_at: string | null; status: string }>; next_cursor: string | null };
    for (const t of page.tasks) {
      if (!t.started_at) continue;
      const late = Date.parse(t.started_at) - data.atMs;
      lateness.add(late);
      if (late < 0) startedEarly.add(1);
    }
    read += page.tasks.length;
    if (!page.next_cursor || page.tasks.length === 0) break;
    cursor = page.next_cursor;
  }
  console.log(`herd: ${done}/${expected} terminal ${drained.toFixed(2)} s after ${data.at}; lateness read from ${read} tasks`);
}
