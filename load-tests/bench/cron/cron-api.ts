/**
 * The cron REST calls bench-cron makes: create a definition, pause it, and read all its fire
 * records (paginated by `next_cursor`). A 429/503 is retried after Retry-After; any other
 * non-success status throws with the answer's start.
 */
import { HttpClient, HttpResult, retryAfterMs } from '../http-client';
import { sleep } from '../run-control';

/** The fields of a definition the bench reads (API view; times are ISO-8601 UTC). */
export interface CronView {
  cron_id: string;
  next_fire_time: string | null;
  last_fire_time: string | null;
  enabled: boolean;
}

/** One fire record as `GET /api/v1/cron-tasks/{id}/runs` returns it. */
export interface FireRun {
  fire_time: string;
  outcome: 'created' | 'skipped' | 'caught_up';
  reason: string | null;
  task_id: string | null;
  status: string | null;
  recorded_at: string;
}

/** Counts the 429/503 answers that were retried. */
export interface Throttle {
  retried: number;
}

async function call(
  client: HttpClient,
  method: string,
  urlPath: string,
  body: string | undefined,
  ok: number,
  throttle: Throttle,
): Promise<HttpResult> {
  for (let tries = 0; ; tries++) {
    const res = method === 'GET' ? await client.get(urlPath) : await client.request(method, urlPath, body, 30_000);
    if (res.status === ok) return res;
    if ((res.status === 429 || res.status === 503) && tries < 20) {
      throttle.retried++;
      await sleep(retryAfterMs(res));
      continue;
    }
    throw new Error(`${method} ${urlPath}: HTTP ${res.status} ${res.body.slice(0, 300)}`);
  }
}

/**
 * `POST /api/v1/cron-tasks` for a `noop` definition with overlap_policy `skip`.
 * @param name the definition's name
 * @param expression six-field cron expression (seconds first), timezone UTC
 */
export async function createCron(client: HttpClient, name: string, expression: string, throttle: Throttle): Promise<CronView> {
  const body = JSON.stringify({ name, cron_expression: expression, timezone: 'UTC', task_type: 'noop', overlap_policy: 'skip' });
  const res = await call(client, 'POST', '/api/v1/cron-tasks', body, 201, throttle);
  return JSON.parse(res.body) as CronView;
}

/** `PATCH /api/v1/cron-tasks/{id}` `{enabled: false}`: the definition as it was paused. */
export async function pauseCron(client: HttpClient, id: string, throttle: Throttle): Promise<CronView> {
  const res = await call(
    client,
    'PATCH',
    `/api/v1/cron-tasks/${encodeURIComponent(id)}`,
    JSON.stringify({ enabled: false }),
    200,
    throttle,
  );
  return JSON.parse(res.body) as CronView;
}

/**
 * Every fire record of a cron at or after `since` (epoch ms), latest first: pages of 1,000
 * following `next_cursor`, stopping at the first page that reaches back before `since`.
 * @returns the records and the number of pages read
 */
export async function readRuns(
  client: HttpClient,
  id: string,
  since: number,
  throttle: Throttle,
): Promise<{ runs: FireRun[]; pages: number }> {
  const runs: FireRun[] = [];
  let cursor: string | null = null;
  let pages = 0;
  for (;;) {
    const q = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const res = await call(client, 'GET', `/api/v1/cron-tasks/${encodeURIComponent(id)}/runs?limit=1000${q}`, undefined, 200, throttle);
    pages++;
    const page = JSON.parse(res.body) as { runs: FireRun[]; next_cursor: string | null };
    runs.push(...page.runs);
    const oldest = page.runs.length > 0 ? Date.parse(page.runs[page.runs.length - 1].fire_time) : -Infinity;
    if (page.next_cursor === null || oldest < since) return { runs, pages };
    cursor = page.next_cursor;
  }
}
