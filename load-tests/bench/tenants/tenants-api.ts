/**
 * The REST calls bench-tenants makes: backlogs sent as batch requests with a few in flight, the
 * admin settings (tenant weight, rate limits), and every task of a type read back through the
 * paginated list. A 429/503 is retried after Retry-After; any other unexpected status throws
 * with the start of the answer.
 */
import { performance } from 'node:perf_hooks';
import { HttpClient, HttpResult, retryAfterMs } from '../http-client';
import { checkAborted, sleep } from '../run-control';
import { distribution, Distribution, round } from '../stats';

/** The fields of a listed task (summary) the bench reads; times are ISO-8601 UTC. */
export interface ListedTask {
  task_id: string;
  task_type: string;
  status: string;
  metadata: { tenant_id?: string } | null;
  due_at: string | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
}

/** Sends `method urlPath` until it answers `ok`, retrying a 429/503 (at most `maxTries`). */
export async function call(
  client: HttpClient,
  method: string,
  urlPath: string,
  body: string | undefined,
  ok: number,
  counters: { throttled: number },
  maxTries = 100,
): Promise<HttpResult> {
  for (let tries = 0; ; tries++) {
    const res = method === 'GET' ? await client.get(urlPath) : await client.request(method, urlPath, body, 60_000);
    if (res.status === ok) return res;
    if ((res.status === 429 || res.status === 503) && tries < maxTries) {
      counters.throttled++;
      await sleep(retryAfterMs(res));
      continue;
    }
    throw new Error(`${method} ${urlPath}: HTTP ${res.status} ${res.body.slice(0, 300)}`);
  }
}

/** The JSON body of one batch request: `size` copies of `task`. */
export const batchBody = (task: Record<string, unknown>, size: number): string =>
  JSON.stringify({ tasks: Array.from({ length: size }, () => task) });

/**
 * Bodies for `n` copies of `task` in batches of `batchSize` (the last one may be smaller); the
 * full-size body is built once and shared.
 */
export function backlogBodies(task: Record<string, unknown>, n: number, batchSize: number): string[] {
  const full = batchBody(task, batchSize);
  const out: string[] = [];
  for (let left = n; left > 0; left -= batchSize) out.push(left >= batchSize ? full : batchBody(task, left));
  return out;
}

/** What a backlog submission did; instants are performance.now() and Date.now(). */
export interface BacklogResult {
  ids: string[][]; // task ids per body, in body order
  acknowledged: number;
  first_send_at: number;
  first_send_wall: number;
  last_ack_at: number;
  last_ack_wall: number;
  throttled: number;
  requests: number;
  batch_latency: Distribution;
}

/**
 * Sends every body with `POST /api/v1/tasks/batch`, `concurrency` requests in flight, in order.
 * @param keepIds parse and keep the task ids of the answers (false: count them only)
 * @throws Error when a batch is refused with anything but 429/503, or on the run's abort
 */
export async function submitBacklog(client: HttpClient, bodies: string[], concurrency: number, keepIds = false): Promise<BacklogResult> {
  const ids: string[][] = bodies.map(() => []);
  const lat: number[] = [];
  const counters = { throttled: 0 };
  let acknowledged = 0;
  let next = 0;
  let failed = false;
  const firstSendAt = performance.now();
  const firstSendWall = Date.now();
  let lastAckAt = firstSendAt;
  let lastAckWall = firstSendWall;
  const lanes = Array.from({ length: Math.min(concurrency, bodies.length) }, async () => {
    for (;;) {
      checkAborted();
      if (failed) return;
      const i = next++;
      if (i >= bodies.length) return;
      const s = performance.now();
      try {
        const res = await call(client, 'POST', '/api/v1/tasks/batch', bodies[i], 202, counters);
        const e = performance.now();
        lat.push(e - s);
        if (e > lastAckAt) {
          lastAckAt = e;
          lastAckWall = Date.now();
        }
        const acks = (JSON.parse(res.body) as { tasks: Array<{ task_id: string }> }).tasks;
        acknowledged += acks.length;
        if (keepIds) ids[i] = acks.map((a) => a.task_id);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  });
  await Promise.all(lanes);
  return {
    ids,
    acknowledged,
    first_send_at: firstSendAt,
    first_send_wall: firstSendWall,
    last_ack_at: lastAckAt,
    last_ack_wall: lastAckWall,
    throttled: counters.throttled,
    requests: bodies.length,
    batch_latency: distribution(lat),
  };
}

/** The JSON summary of a backlog submission (durations in s from its first send). */
export function backlogSummary(b: BacklogResult): Record<string, unknown> {
  const s = (b.last_ack_at - b.first_send_at) / 1000;
  return {
    acknowledged: b.acknowledged,
    requests: b.requests,
    seconds: round(s, 3),
    tasks_per_s: round(s > 0 ? b.acknowledged / s : null, 0),
    throttled_responses: b.throttled,
    batch_latency: b.batch_latency,
  };
}

/** `PUT /api/v1/tenants/{id}` `{weight}`: the tenant's settings as the service answers them. */
export async function putTenantWeight(client: HttpClient, tenant: string, weight: number): Promise<Record<string, unknown>> {
  const res = await call(
    client,
    'PUT',
    `/api/v1/tenants/${encodeURIComponent(tenant)}`,
    JSON.stringify({ weight }),
    200,
    { throttled: 0 },
    5,
  );
  return JSON.parse(res.body) as Record<string, unknown>;
}

/** `GET urlPath` (200 expected) parsed as JSON. */
export async function getJson(client: HttpClient, urlPath: string): Promise<unknown> {
  const res = await call(client, 'GET', urlPath, undefined, 200, { throttled: 0 }, 5);
  return JSON.parse(res.body) as unknown;
}

/**
 * Every task of `taskType` (summaries, newest first) through
 * `GET /api/v1/tasks?task_type=…&limit=1000`, following `next_cursor`.
 */
export async function listTasksOfType(client: HttpClient, taskType: string): Promise<ListedTask[]> {
  const out: ListedTask[] = [];
  let cursor: string | null = null;
  for (;;) {
    const q = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const page = (await getJson(client, `/api/v1/tasks?task_type=${encodeURIComponent(taskType)}&limit=1000${q}`)) as {
      tasks: ListedTask[];
      next_cursor: string | null;
    };
    out.push(...page.tasks);
    if (page.next_cursor === null || page.tasks.length === 0) return out;
    cursor = page.next_cursor;
  }
}
