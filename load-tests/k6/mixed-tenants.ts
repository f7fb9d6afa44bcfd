// Mixed tenants: one tenant floods, the others submit steadily; do the steady tenants' tasks
// still start promptly?
//
//   k6 run -e BASE_URL=http://127.0.0.1:8080 -e FLOOD_RATE=20 -e STEADY_TENANTS=4 load-tests/k6/mixed-tenants.ts
//
// Tenants are `metadata.tenant_id`. Scenario `flood`: tenant FLOOD_TENANT (noisy) sends
// FLOOD_RATE batches per second of FLOOD_BATCH (500) noop tasks. Scenario `steady`: each of
// STEADY_TENANTS tenants (steady-1…) sends STEADY_RATE single tasks per second; each iteration
// submits one task, then polls it (every 50 ms, at most POLL_TIMEOUT_S) until it has started and
// records steady_dispatch_lag_ms = started_at − due_at, tagged with its tenant. Both run for
// DURATION. ITERATIONS (smoke tests) runs each scenario that many times instead.
import http from 'k6/http';
import { check, sleep } from 'k6';
import exec from 'k6/execution';
import { Counter, Trend } from 'k6/metrics';
import type { Options, Scenario } from 'k6/options';

const BASE_URL = (__ENV.BASE_URL || 'http://127.0.0.1:8080').replace(/\/+$/, '');
const DURATION = __ENV.DURATION || '1m';
const FLOOD_TENANT = __ENV.FLOOD_TENANT || 'noisy';
const FLOOD_RATE = parseInt(__ENV.FLOOD_RATE || '20', 10);
const FLOOD_BATCH = Math.min(1000, parseInt(__ENV.FLOOD_BATCH || '500', 10));
const STEADY_TENANTS = parseInt(__ENV.STEADY_TENANTS || '4', 10);
const STEADY_RATE = parseInt(__ENV.STEADY_RATE || '10', 10);
const POLL_TIMEOUT_S = parseFloat(__ENV.POLL_TIMEOUT_S || '30');
const ITERATIONS = parseInt(__ENV.ITERATIONS || '0', 10);

function scenario(exec: string, rate: number, maxVUs: number): Scenario {
  return ITERATIONS > 0
    ? { executor: 'shared-iterations', vus: 1, iterations: ITERATIONS, exec }
    : {
        executor: 'constant-arrival-rate',
        rate,
        timeUnit: '1s',
        duration: DURATION,
        preAllocatedVUs: Math.min(maxVUs, Math.max(2, rate)),
        maxVUs,
        exec,
      };
}

export const options: Options = {
  scenarios: {
    flood: scenario('flood', FLOOD_RATE, Math.max(10, FLOOD_RATE * 2)),
    // Each steady iteration waits for its task to start, so it holds a VU for that long.
    steady: scenario('steady', STEADY_RATE * STEADY_TENANTS, Math.max(20, STEADY_RATE * STEADY_TENANTS * 4)),
  },
  thresholds: {
    steady_dispatch_lag_ms: ['p(95)<500', 'p(99)<2000'],
    'http_req_duration{name:submit_steady}': ['p(95)<100'],
    'http_req_duration{name:submit_flood}': ['p(95)<2000'],
    http_req_failed: ['rate<0.01'],
    checks: ['rate>0.99'],
    steady_not_started: ['count<1'],
  },
  summaryTrendStats: ['avg', 'med', 'p(90)', 'p(95)', 'p(99)', 'max'],
};

const steadyLag = new Trend('steady_dispatch_lag_ms');
const notStarted = new Counter('steady_not_started');
const floodAcked = new Counter('flood_tasks_acknowledged');
const HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json' };

function floodBody(): string {
  const tasks = [];
  for (let i = 0; i < FLOOD_BATCH; i++) tasks.push({ task_type: 'noop', metadata: { tenant_id: FLOOD_TENANT } });
  return JSON.stringify({ tasks });
}
const FLOOD_BODY = floodBody();

export function flood(): void {
  const res = http.post(`${BASE_URL}/api/v1/tasks/batch`, FLOOD_BODY, { headers: HEADERS, tags: { name: 'submit_flood' }, timeout: '60s' });
  // A flooding tenant may be throttled (429/503): that is the service protecting the others.
  if (res.status === 202) floodAcked.add(FLOOD_BATCH);
  check(res, { 'flood: 202 or throttled': (r) => r.status === 202 || r.status === 429 || r.status === 503 });
}

export function steady(): void {
  const tenant = `steady-${(exec.scenario.iterationInTest % STEADY_TENANTS) + 1}`;
  const body = JSON.stringify({ task_type: 'noop', metadata: { tenant_id: tenant } });
  const res = http.post(`${BASE_URL}/api/v1/tasks`, body, { headers: HEADERS, tags: { name: 'submit_steady', tenant } });
  if (!check(res, { 'steady: 202': (r) => r.status === 202 })) return;
  const id = res.json('task_id') as string;
  const deadline = Date.now() + POLL_TIMEOUT_S * 1000;
  for (;;) {
    const t = http.get(`${BASE_URL}/api/v1/tasks/${id}`, { tags: { name: 'poll_steady' } });
    const task = t.status === 200 ? (t.json() as { started_at: string | null; due_at: string | null }) : null;
    if (task && task.started_at && task.due_at) {
      steadyLag.add(Date.parse(task.started_at) - Date.parse(task.due_at), { tenant });
      return;
    }
    if (Date.now() > deadline) {
      notStarted.add(1, { tenant });
      return;
    }
    sleep(0.05);
  }
}
