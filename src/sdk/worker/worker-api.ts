/**
 * The HTTP calls of a pull worker, over the SDK's transport: lease a queue's due tasks (long poll),
 * and the reports on a leased attempt (heartbeat, complete, checkpoint, progress, logs). Each report
 * names the attempt: the scheduler refuses a stale one with 409 `ATTEMPT_CONFLICT` (docs/API.md).
 */
import { ApiClient, ApiError, ConnectionError } from '../transport';
import type { JsonValue, LeasedTask, LogLevel, ProgressValue } from './types';

/** Most tasks one lease request may ask for (the endpoint's `max` bound). */
export const MAX_LEASE_BATCH = 100;

/** Most seconds a lease request may wait (the endpoint's `wait_s` bound). */
export const MAX_POLL_WAIT_S = 30;

/** Seconds a lease answer may take beyond its `wait_s` before the request is given up as lost. */
const LEASE_ANSWER_MARGIN_S = 15;

/** The failure of a completion: retried unless `permanent`. */
export interface CompletionError {
  message: string;
  type: string;
  permanent: boolean;
  /** The thrown error's `code` (a string, or a number as its text), when it had one. */
  code?: string;
  /** The thrown error's stack (the scheduler keeps its first 30 lines). */
  stack?: string;
}

/** One `ctx.log` line as the logs endpoint takes it. */
export interface LogLine {
  level: LogLevel;
  msg: string;
  /** ISO-8601 instant the handler logged it. */
  at: string;
  fields?: Record<string, unknown>;
}

/**
 * True for a failure worth retrying the same call for: no answer (refused, reset, DNS, TLS), or an
 * answer saying the service is momentarily unable (408, 429, 5xx).
 */
export function isTransient(err: unknown): boolean {
  if (err instanceof ConnectionError) return true;
  return err instanceof ApiError && (err.status === 408 || err.status === 429 || err.status >= 500);
}

/**
 * True when the scheduler refused a report because the attempt is no longer the task's running one
 * (409: cancelled, lease expired and the task run again, already completed) or the task is gone (404).
 */
export function isStale(err: unknown): boolean {
  return err instanceof ApiError && (err.status === 409 || err.status === 404);
}

/** The lease and report endpoints of one queue, for one worker id. */
export class WorkerApi {
  private readonly leasePath: string;

  /**
   * @param client the transport (URL, key, TLS)
   * @param queue the pull queue's name
   * @param workerId sent with each lease
   */
  constructor(
    private readonly client: ApiClient,
    queue: string,
    private readonly workerId: string,
  ) {
    this.leasePath = `/api/v1/queues/${encodeURIComponent(queue)}/lease`;
  }

  /**
   * `POST /api/v1/queues/{queue}/lease`: up to `max` (1–100) due tasks, waiting up to `waitS`
   * seconds (0–30) for one. @param signal aborts the wait (close)
   * @returns the leased tasks, `[]` when none came in time
   * @throws ApiError; ConnectionError (also when aborted)
   */
  async lease(max: number, waitS: number, signal?: AbortSignal): Promise<LeasedTask[]> {
    const body = { worker_id: this.workerId, max, wait_s: waitS };
    const res = await this.client.request<{ tasks?: LeasedTask[] }>('POST', this.leasePath, {
      body,
      signal,
      // The worker's own loop backs off and asks again; the answer may take the whole wait.
      noRetry: true,
      timeoutMs: (waitS + LEASE_ANSWER_MARGIN_S) * 1000,
    });
    return Array.isArray(res.body?.tasks) ? res.body.tasks : [];
  }

  /** `POST /api/v1/tasks/{id}/heartbeat`: @returns the new lease expiry (ISO-8601) */
  async heartbeat(taskId: string, attempt: number): Promise<string> {
    const res = await this.client.post<{ lease_expires_at: string }>(`${taskPath(taskId)}/heartbeat`, { attempt });
    return res.lease_expires_at;
  }

  /** `POST /api/v1/tasks/{id}/complete` with a result (success) or an error (failure). */
  async complete(taskId: string, attempt: number, outcome: { result: JsonValue } | { error: CompletionError }): Promise<void> {
    await this.client.post(`${taskPath(taskId)}/complete`, { attempt, ...outcome });
  }

  /** `POST /api/v1/tasks/{id}/checkpoint`. */
  async checkpoint(taskId: string, attempt: number, value: JsonValue): Promise<void> {
    await this.client.post(`${taskPath(taskId)}/checkpoint`, { attempt, value });
  }

  /** `POST /api/v1/tasks/{id}/progress`. */
  async progress(taskId: string, attempt: number, progress: ProgressValue): Promise<void> {
    await this.client.post(`${taskPath(taskId)}/progress`, { attempt, progress });
  }

  /** `POST /api/v1/tasks/{id}/logs`: lines of `ctx.log`, kept with the attempt. */
  async logs(taskId: string, attempt: number, lines: LogLine[]): Promise<void> {
    await this.client.post(`${taskPath(taskId)}/logs`, { attempt, lines });
  }
}

function taskPath(taskId: string): string {
  return `/api/v1/tasks/${encodeURIComponent(taskId)}`;
}
