/**
 * Lag from the tasks themselves: fetching tasks with GET /api/v1/tasks/{id} and the dispatch lag
 * (started_at − due_at) over them. Also the shape of a submission acknowledgement.
 */
import type { HttpClient } from './http-client';
import { mapLimit } from './run-control';
import { Distribution, distribution } from './stats';

export interface SubmitAck {
  task_id: string;
  status: string;
}

export interface TaskView {
  task_id: string;
  status: string;
  scheduled_at: string | null;
  due_at: string | null;
  started_at: string | null;
  created_at: string;
  completed_at: string | null;
}

export async function fetchTasks(client: HttpClient, ids: string[], concurrency = 8): Promise<TaskView[]> {
  return mapLimit(ids, concurrency, async (id) => {
    const res = await client.get(`/api/v1/tasks/${encodeURIComponent(id)}`);
    if (res.status !== 200) throw new Error(`GET /api/v1/tasks/${id}: HTTP ${res.status} ${res.body.slice(0, 200)}`);
    return JSON.parse(res.body) as TaskView;
  });
}

export interface LagReport extends Distribution {
  sampled_of: number;
  not_succeeded: number;
  started_before_due: number;
}

/** Dispatch lag = started_at − due_at (ms) over the fetched tasks. */
export function lagReport(tasks: TaskView[], of: number): LagReport {
  const lags: number[] = [];
  let notOk = 0;
  let early = 0;
  for (const t of tasks) {
    if (t.status !== 'SUCCEEDED') notOk++;
    if (!t.started_at || !t.due_at) continue;
    const lag = Date.parse(t.started_at) - Date.parse(t.due_at);
    if (lag < 0) early++;
    lags.push(lag);
  }
  return { ...distribution(lags), sampled_of: of, not_succeeded: notOk, started_before_due: early };
}
