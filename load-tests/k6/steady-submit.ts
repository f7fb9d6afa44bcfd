// Steady submission: single tasks at a constant arrival rate, as an application sends them.
//
//   k6 run -e BASE_URL=http://127.0.0.1:8080 -e RATE=200 -e DURATION=2m load-tests/k6/steady-submit.ts
//
// RATE submissions per second (constant-arrival-rate: k6 starts iterations on schedule whatever
// the answer time, so a slow service shows as latency and dropped_iterations, not as a lower
// rate) for DURATION, each `POST /api/v1/tasks` of TASK_TYPE (noop) with a payload of about
// PAYLOAD_BYTES (64). 429/503 answers count as failures here: a steady load below capacity should
// never be throttled. ITERATIONS (smoke tests) replaces the rate with that many iterations.
import http from 'k6/http';
import { check } from 'k6';
import { Counter } from 'k6/metrics';
import type { Options } from 'k6/options';

const BASE_URL = (__ENV.BASE_URL || 'http://127.0.0.1:8080').replace(/\/+$/, '');
const RATE = parseInt(__ENV.RATE || '200', 10);
const DURATION = __ENV.DURATION || '1m';
const TASK_TYPE = __ENV.TASK_TYPE || 'noop';
const PAYLOAD_BYTES = parseInt(__ENV.PAYLOAD_BYTES || '64', 10);
const ITERATIONS = parseInt(__ENV.ITERATIONS || '0', 10);

export const options: Options = {
  scenarios: {
    steady:
      ITERATIONS > 0
        ? { executor: 'shared-iterations', vus: 1, iterations: ITERATIONS, exec: 'submitOne' }
        : {
            executor: 'constant-arrival-rate',
            rate: RATE,
            timeUnit: '1s',
            duration: DURATION,
            preAllocatedVUs: Math.max(10, Math.ceil(RATE / 20)),
            maxVUs: Math.max(50, RATE),
            exec: 'submitOne',
          },
  },
  thresholds: {
    'http_req_duration{name:submit}': ['p(95)<100', 'p(99)<250'],
    http_req_failed: ['rate<0.01'],
    checks: ['rate>0.99'],
    tasks_throttled: ['count<1'],
  },
  summaryTrendStats: ['avg', 'med', 'p(90)', 'p(95)', 'p(99)', 'max'],
};

const throttled = new Counter('tasks_throttled');
const PAYLOAD = { note: 'x'.repeat(Math.max(0, PAYLOAD_BYTES - 12)) };
const HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json' };

export function submitOne(): void {
  const body = JSON.stringify({ task_type: TASK_TYPE, payload: PAYLOAD, metadata: { correlation_id: `k6-${__VU}-${__ITER}` } });
  const res = http.post(`${BASE_URL}/api/v1/tasks`, body, { headers: HEADERS, tags: { name: 'submit' } });
  if (res.status === 429 || res.status === 503) throttled.add(1);
  check(res, {
    'submit: 202': (r) => r.status === 202,
    'submit: has task_id': (r) => r.status === 202 && typeof r.json('task_id') === 'string',
  });
}
