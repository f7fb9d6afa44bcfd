// Cron creation at scale: CRONS definitions through `POST /api/v1/cron-tasks`, then (CLEANUP,
// default true) deleted again.
//
//   k6 run -e BASE_URL=http://127.0.0.1:8080 -e CRONS=10000 -e CONCURRENCY=8 load-tests/k6/cron-at-scale.ts
//
// Each definition: CRON_EXPRESSION (`0 0 * * *`, midnight, so that creating them does not also
// fire them; `* * * * * *` measures creation while they fire) in TIMEZONE (UTC), task `noop`,
// tenant `k6-cron-<start>` (metadata.tenant_id) so that teardown() finds exactly this run's
// definitions with `GET /api/v1/cron-tasks?tenant=…` and deletes them. CONCURRENCY VUs share the
// CRONS creations.
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
import { Counter } from 'k6/metrics';
import type { Options } from 'k6/options';

const BASE_URL = (__ENV.BASE_URL || 'http://127.0.0.1:8080').replace(/\/+$/, '');
const CRONS = parseInt(__ENV.CRONS || '10000', 10);
const CONCURRENCY = parseInt(__ENV.CONCURRENCY || '8', 10);
const CRON_EXPRESSION = __ENV.CRON_EXPRESSION || '0 0 * * *';
const TIMEZONE = __ENV.TIMEZONE || 'UTC';
const CLEANUP = (__ENV.CLEANUP || 'true') !== 'false';

export const options: Options = {
  scenarios: {
    create_crons: {
      executor: 'shared-iterations',
      vus: Math.min(CONCURRENCY, CRONS),
      iterations: CRONS,
      maxDuration: '10m',
      exec: 'createCron',
    },
  },
  thresholds: {
    'http_req_duration{name:create_cron}': ['p(95)<200', 'p(99)<500'],
    'http_req_duration{name:delete_cron}': ['p(95)<200'],
    http_req_failed: ['rate<0.01'],
    checks: ['rate>0.99'],
    crons_created: [`count>=${CRONS}`],
  },
  teardownTimeout: '10m',
  summaryTrendStats: ['avg', 'med', 'p(90)', 'p(95)', 'p(99)', 'max'],
};

const created = new Counter('crons_created');
const deleted = new Counter('crons_deleted');
const HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json' };

export function setup(): { tenant: string } {
  const ready = http.get(`${BASE_URL}/readyz`, { tags: { name: 'readyz' } });
  if (ready.status !== 200) throw new Error(`${BASE_URL}/readyz answered ${ready.status}: is the service running?`);
  return { tenant: `k6-cron-${Date.now()}` };
}

export function createCron(data: { tenant: string }): void {
  const i = exec.scenario.iterationInTest;
  const body = JSON.stringify({
    name: `k6 cron ${i}`,
    cron_expression: CRON_EXPRESSION,
    timezone: TIMEZONE,
    task_type: 'noop',
    payload: { n: i },
    overlap_policy: 'skip',
    catch_up: 'none',
    metadata: { tenant_id: data.tenant },
  });
  const res = http.post(`${BASE_URL}/api/v1/cron-tasks`, body, { headers: HEADERS, tags: { name: 'create_cron' } });
  const ok = check(res, {
    'cron: 201': (r) => r.status === 201,
    'cron: has next_fire_time': (r) => r.status === 201 && typeof r.json('next_fire_time') === 'string',
  });
  if (ok) created.add(1);
}

export function teardown(data: { tenant: string }): void {
  if (!CLEANUP) return;
  // Deleting while listing would shift the pages: collect every id first.
  const ids: string[] = [];
  let cursor = '';
  for (;;) {
    const res = http.get(
      `${BASE_URL}/api/v1/cron-tasks?tenant=${encodeURIComponent(data.tenant)}&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { tags: { name: 'list_crons' } },
    );
    if (!check(res, { 'cron list: 200': (r) => r.status === 200 })) return;
    const page = res.json() as { cron_tasks: Array<{ cron_id: string }>; next_cursor: string | null };
    for (const c of page.cron_tasks) ids.push(c.cron_id);
    if (!page.next_cursor || page.cron_tasks.length === 0) break;
    cursor = page.next_cursor;
  }
  for (let i = 0; i < ids.length; i += 20) {
    const responses = http.batch(
      ids
        .slice(i, i + 20)
        .map((id) => ({ method: 'DELETE', url: `${BASE_URL}/api/v1/cron-tasks/${id}`, params: { tags: { name: 'delete_cron' } } })),
    );
    for (const r of responses) if (check(r, { 'cron delete: 200': (x) => x.status === 200 })) deleted.add(1);
  }
}
