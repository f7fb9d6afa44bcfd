// Reads: clients polling task status, and listing.
//
//   k6 run -e BASE_URL=http://127.0.0.1:8080 -e READ_RATE=500 -e SEED_TASKS=5000 load-tests/k6/status-reads.ts
//
// setup() submits SEED_TASKS noop tasks (batches of 1,000) and hands their ids to the VUs.
// Scenario `poll`: READ_RATE `GET /api/v1/tasks/{id}` per second of a random seeded id, with
// `?include=attempts` every INCLUDE_ATTEMPTS_EVERY-th read (10). Scenario `list`: LIST_RATE
// `GET /api/v1/tasks?status=SUCCEEDED&limit=LIST_LIMIT` per second, following next_cursor for
// up to 3 pages. Both for DURATION. ITERATIONS (smoke tests) runs each that many times instead.
import http from 'k6/http';
import { check } from 'k6';
import type { Options, Scenario } from 'k6/options';

const BASE_URL = (__ENV.BASE_URL || 'http://127.0.0.1:8080').replace(/\/+$/, '');
const SEED_TASKS = parseInt(__ENV.SEED_TASKS || '5000', 10);
const READ_RATE = parseInt(__ENV.READ_RATE || '500', 10);
const LIST_RATE = parseInt(__ENV.LIST_RATE || '10', 10);
const LIST_LIMIT = parseInt(__ENV.LIST_LIMIT || '50', 10);
const INCLUDE_ATTEMPTS_EVERY = parseInt(__ENV.INCLUDE_ATTEMPTS_EVERY || '10', 10);
const DURATION = __ENV.DURATION || '1m';
const ITERATIONS = parseInt(__ENV.ITERATIONS || '0', 10);

function scenario(exec: string, rate: number): Scenario {
  return ITERATIONS > 0
    ? { executor: 'shared-iterations', vus: 1, iterations: ITERATIONS, exec }
    : {
        executor: 'constant-arrival-rate',
        rate,
        timeUnit: '1s',
        duration: DURATION,
        preAllocatedVUs: Math.max(5, Math.ceil(rate / 50)),
        maxVUs: Math.max(20, rate),
        exec,
      };
}

export const options: Options = {
  scenarios: { poll: scenario('poll', READ_RATE), list: scenario('list', LIST_RATE) },
  thresholds: {
    'http_req_duration{name:get_task}': ['p(95)<20', 'p(99)<50'],
    'http_req_duration{name:get_task_attempts}': ['p(95)<50'],
    'http_req_duration{name:list_tasks}': ['p(95)<200'],
    http_req_failed: ['rate<0.01'],
    checks: ['rate>0.99'],
  },
  setupTimeout: '120s',
  summaryTrendStats: ['avg', 'med', 'p(90)', 'p(95)', 'p(99)', 'max'],
};

const HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json' };

export function setup(): { ids: string[] } {
  const ids: string[] = [];
  for (let left = SEED_TASKS; left > 0; left -= 1000) {
    const tasks = [];
    for (let i = 0; i < Math.min(1000, left); i++) tasks.push({ task_type: 'echo', payload: { seed: i } });
    const res = http.post(`${BASE_URL}/api/v1/tasks/batch`, JSON.stringify({ tasks }), {
      headers: HEADERS,
      tags: { name: 'seed' },
      timeout: '60s',
    });
    if (res.status !== 202) throw new Error(`seeding: POST /api/v1/tasks/batch answered ${res.status}: ${String(res.body).slice(0, 200)}`);
    for (const t of res.json('tasks') as Array<{ task_id: string }>) ids.push(t.task_id);
  }
  return { ids };
}

export function poll(data: { ids: string[] }): void {
  const id = data.ids[Math.floor(Math.random() * data.ids.length)];
  const withAttempts = INCLUDE_ATTEMPTS_EVERY > 0 && __ITER % INCLUDE_ATTEMPTS_EVERY === 0;
  const res = http.get(`${BASE_URL}/api/v1/tasks/${id}${withAttempts ? '?include=attempts' : ''}`, {
    tags: { name: withAttempts ? 'get_task_attempts' : 'get_task' },
  });
  check(res, {
    'get: 200': (r) => r.status === 200,
    'get: the task asked for': (r) => r.status === 200 && r.json('task_id') === id,
  });
}

export function list(): void {
  let cursor = '';
  for (let page = 0; page < 3; page++) {
    const res = http.get(
      `${BASE_URL}/api/v1/tasks?status=SUCCEEDED&limit=${LIST_LIMIT}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { tags: { name: 'list_tasks' } },
    );
    if (!check(res, { 'list: 200': (r) => r.status === 200 })) return;
    const next = res.json('next_cursor') as string | null;
    if (!next) return;
    cursor = next;
  }
}
