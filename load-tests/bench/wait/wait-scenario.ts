/**
 * The bench-wait scenario against a running service: the ends of short tasks as seen through
 * `?wait=` (delay from the task's `completed_at` to the answer), and waits that time out (how late
 * after the requested timeout they answer). Client and service share the machine's clock.
 */
import type { HttpClient, HttpResult } from '../http-client';
import { distribution, round } from '../stats';
import type { WaitOptions } from './wait-options';

/** Tasks per batch request. */
const BATCH = 1000;

/** The p99 delay the scheduler aims at (ms). */
export const GOAL_P99_MS = 50;

function json(res: HttpResult, what: string): Record<string, any> {
  if (res.status >= 300) throw new Error(`${what}: HTTP ${res.status} ${res.body.slice(0, 300)}`);
  return JSON.parse(res.body) as Record<string, any>;
}

/** Submits `tasks` in batches. @returns their ids, in order */
async function submitAll(client: HttpClient, tasks: object[]): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < tasks.length; i += BATCH) {
    const res = json(await client.request('POST', '/api/v1/tasks/batch', JSON.stringify({ tasks: tasks.slice(i, i + BATCH) })), 'submit');
    ids.push(...(res.tasks as Array<{ task_id: string }>).map((t) => t.task_id));
  }
  return ids;
}

/** One wait: the answer and the instants it was sent and received (epoch ms). */
async function timedWait(client: HttpClient, id: string, waitS: number) {
  const sentAt = Date.now();
  const res = await client.request('GET', `/api/v1/tasks/${id}?wait=${waitS}`, undefined, (waitS + 30) * 1000);
  const answeredAt = Date.now();
  return { sentAt, answeredAt, task: json(res, `wait ${id}`) };
}

/** Runs the scenario. @returns the figures for the report */
export async function waitScenario(client: HttpClient, o: WaitOptions): Promise<Record<string, unknown>> {
  const tasks = Array.from({ length: o.tasks }, (_, i) => ({
    task_type: 'sleep',
    payload: { ms: o.leadMs + Math.round((o.spreadMs * i) / Math.max(1, o.tasks - 1)) },
  }));
  const submitStarted = Date.now();
  const ids = await submitAll(client, tasks);
  const submitMs = Date.now() - submitStarted;
  const answers = await Promise.all(ids.map((id) => timedWait(client, id, o.waitS)));

  const delays: number[] = [];
  let endedBeforeWait = 0;
  const notTerminal: string[] = [];
  for (const a of answers) {
    const completedAt = a.task.completed_at ? Date.parse(a.task.completed_at as string) : NaN;
    if (a.task.status !== 'SUCCEEDED' || !Number.isFinite(completedAt)) {
      notTerminal.push(`${a.task.task_id}: ${a.task.status}`);
      continue;
    }
    // A task that ended before its wait was sent is answered at once: no figure of the wake-up.
    if (completedAt < a.sentAt) endedBeforeWait++;
    else delays.push(a.answeredAt - completedAt);
  }

  // Waits that time out: tasks an hour ahead, timeouts of 1, 1.5, 2, ... s, held at once.
  const later = new Date(Date.now() + 3_600_000).toISOString();
  const farIds = await submitAll(
    client,
    Array.from({ length: o.timeouts }, () => ({ task_type: 'noop', scheduled_at: later })),
  );
  const timed = await Promise.all(
    farIds.map(async (id, i) => {
      const waitS = 1 + i * 0.5;
      const a = await timedWait(client, id, waitS);
      const tookMs = a.answeredAt - a.sentAt;
      return { wait_s: waitS, status: a.task.status, answered_after_ms: tookMs, lateness_ms: round(tookMs - waitS * 1000, 1) };
    }),
  );
  const delay = distribution(delays);
  return {
    tasks: o.tasks,
    submit_ms: submitMs,
    waits_measured: delays.length,
    ended_before_wait_sent: endedBeforeWait,
    not_succeeded: notTerminal.slice(0, 10),
    delay_after_end: delay,
    goal_p99_ms: GOAL_P99_MS,
    goal_met: delay.p99_ms !== null && delay.p99_ms <= GOAL_P99_MS,
    timeouts: timed,
    timeout_lateness: distribution(timed.map((t) => t.lateness_ms ?? 0)),
  };
}
