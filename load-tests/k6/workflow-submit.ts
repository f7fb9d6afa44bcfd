// Workflow submission: DAGs through `POST /api/v1/workflows`.
//
//   k6 run -e BASE_URL=http://127.0.0.1:8080 -e WF_RATE=20 -e WF_WIDTH=10 load-tests/k6/workflow-submit.ts
//
// Contract: `{workflow_name?, tasks: [{task_id, task_type, payload, dependencies: [task_ids]}]}` → 202
// `{workflow_id, status, tasks: {task_id: state}, task_ids: {…}}`. Each workflow is a fan-out/fan-in of WF_WIDTH + 2 noop tasks:
// `extract` → `transform-1…WF_WIDTH` → `load`. WF_RATE workflows per second for DURATION;
// ITERATIONS (smoke tests) runs that many instead. With WAIT_FOR_COMPLETION=true each iteration
// also polls `GET /api/v1/workflows/{id}` (every 100 ms, at most 30 s) until its status is
// terminal and records workflow_completion_ms.
import http from 'k6/http';
import { check, sleep } from 'k6';
import { Trend } from 'k6/metrics';
import type { Options } from 'k6/options';

const BASE_URL = (__ENV.BASE_URL || 'http://127.0.0.1:8080').replace(/\/+$/, '');
const WF_RATE = parseInt(__ENV.WF_RATE || '20', 10);
const WF_WIDTH = parseInt(__ENV.WF_WIDTH || '10', 10);
const DURATION = __ENV.DURATION || '1m';
const ITERATIONS = parseInt(__ENV.ITERATIONS || '0', 10);
const WAIT_FOR_COMPLETION = __ENV.WAIT_FOR_COMPLETION === 'true';

export const options: Options = {
  scenarios: {
    workflows:
      ITERATIONS > 0
        ? { executor: 'shared-iterations', vus: 1, iterations: ITERATIONS, exec: 'submitWorkflow' }
        : {
            executor: 'constant-arrival-rate',
            rate: WF_RATE,
            timeUnit: '1s',
            duration: DURATION,
            preAllocatedVUs: Math.max(5, WF_RATE),
            maxVUs: Math.max(50, WF_RATE * 10),
            exec: 'submitWorkflow',
          },
  },
  thresholds: {
    'http_req_duration{name:submit_workflow}': ['p(95)<200', 'p(99)<500'],
    http_req_failed: ['rate<0.01'],
    checks: ['rate>0.99'],
    workflow_completion_ms: ['p(95)<5000'],
  },
  summaryTrendStats: ['avg', 'med', 'p(90)', 'p(95)', 'p(99)', 'max'],
};

const completion = new Trend('workflow_completion_ms');
const HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json' };
const TERMINAL = ['SUCCEEDED', 'FAILED', 'CANCELLED', 'DEAD'];

function workflowBody(): string {
  const transforms = [];
  for (let i = 1; i <= WF_WIDTH; i++)
    transforms.push({ task_id: `transform-${i}`, task_type: 'noop', payload: { part: i }, dependencies: ['extract'] });
  return JSON.stringify({
    workflow_name: `k6 etl ${__VU}-${__ITER}`,
    tasks: [
      { task_id: 'extract', task_type: 'noop', payload: { source: 'k6' }, dependencies: [] },
      ...transforms,
      { task_id: 'load', task_type: 'noop', payload: null, dependencies: transforms.map((t) => t.task_id) },
    ],
  });
}

export function submitWorkflow(): void {
  const started = Date.now();
  const res = http.post(`${BASE_URL}/api/v1/workflows`, workflowBody(), { headers: HEADERS, tags: { name: 'submit_workflow' } });
  const ok = check(res, {
    'workflow: 202': (r) => r.status === 202,
    'workflow: has workflow_id': (r) => r.status === 202 && typeof r.json('workflow_id') === 'string',
  });
  if (!ok || !WAIT_FOR_COMPLETION) return;
  const id = res.json('workflow_id') as string;
  while (Date.now() - started < 30_000) {
    const w = http.get(`${BASE_URL}/api/v1/workflows/${id}`, { tags: { name: 'get_workflow' } });
    if (w.status === 200 && TERMINAL.indexOf(String(w.json('status'))) >= 0) {
      completion.add(Date.now() - started);
      check(w, { 'workflow: SUCCEEDED': (r) => r.json('status') === 'SUCCEEDED' });
      return;
    }
    sleep(0.1);
  }
  check(null, { 'workflow: finished within 30 s': () => false });
}
