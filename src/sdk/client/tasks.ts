import type { ApiClient } from '../transport';
import { RequestBodyError } from '../errors';
import { apiPath } from './paths';
import { pages } from './pages';
import type {
  AttemptLogAppendBody,
  AttemptLogView,
  AttemptView,
  ListTasksQuery,
  SubmitAck,
  SubmitOptions,
  TaskCancelView,
  TaskPageView,
  TaskPatchBody,
  TaskSubmissionBody,
  TaskView,
  WaitOptions,
} from './types';
import { TERMINAL_TASK_STATUSES, waitForStatus } from './wait';

const traceHeaders = (o: SubmitOptions = {}): Record<string, string> => (o.traceparent ? { traceparent: o.traceparent } : {});

/** An idempotency key makes a submission safe to repeat after a connection lost mid-request. */
const hasKey = (t: TaskSubmissionBody | null | undefined) => typeof t?.idempotency_key === 'string';

/** `client.tasks`: submit, read, list, change, cancel and wait for tasks (docs/API.md "Tasks"). */
export class TasksApi {
  constructor(private readonly http: ApiClient) {}

  /**
   * `POST /api/v1/tasks`. A repeat of an earlier submission with the same `idempotency_key` answers
   * the original task with `idempotent_replayed: true`.
   * @throws BadRequestError (`VALIDATION_FAILED` with `field`, `UNKNOWN_TASK_TYPE`), ConflictError (`IDEMPOTENCY_CONFLICT`), …
   */
  async submit(task: TaskSubmissionBody, options?: SubmitOptions): Promise<SubmitAck> {
    if (typeof task !== 'object' || task === null || Array.isArray(task))
      throw new RequestBodyError(`task: must be an object (a task submission); got ${describe(task)}`);
    const res = await this.http.request<SubmitAck>('POST', apiPath('tasks'), {
      body: task,
      headers: traceHeaders(options),
      idempotent: hasKey(task),
    });
    return res.body;
  }

  /**
   * `POST /api/v1/tasks/batch`: all stored or none (at most the service's `batchMaxTasks`).
   * @returns the acknowledgements in the order of `tasks`
   */
  async batch(tasks: TaskSubmissionBody[], options?: SubmitOptions): Promise<SubmitAck[]> {
    if (!Array.isArray(tasks)) throw new RequestBodyError(`tasks: must be an array of task submissions; got ${describe(tasks)}`);
    const res = await this.http.request<{ tasks: SubmitAck[] }>('POST', apiPath('tasks', 'batch'), {
      body: { tasks },
      headers: traceHeaders(options),
      idempotent: tasks.length > 0 && tasks.every(hasKey),
    });
    return res.body.tasks;
  }

  /** `GET /api/v1/tasks/{id}` (`attempts: true` adds `attempt_history`). @throws NotFoundError (`TASK_NOT_FOUND`) */
  async get(id: string, options: { attempts?: boolean } = {}): Promise<TaskView> {
    return this.http.get<TaskView>(apiPath('tasks', id), { include: options.attempts ? 'attempts' : undefined });
  }

  /** The finished attempts of a task, oldest first (`GET /api/v1/tasks/{id}?include=attempts`). */
  async attempts(id: string): Promise<AttemptView[]> {
    return (await this.get(id, { attempts: true })).attempt_history ?? [];
  }

  /** `GET /api/v1/tasks`: one page, newest first (summaries without payload and result). */
  async list(query: ListTasksQuery = {}): Promise<TaskPageView> {
    return this.http.get<TaskPageView>(apiPath('tasks'), query);
  }

  /** Every task the filters match, page after page (`next_cursor`), newest first. */
  iterate(query: Omit<ListTasksQuery, 'cursor'> = {}): AsyncGenerator<TaskView> {
    return pages(
      (cursor) => this.list({ ...query, cursor }),
      (p) => p.tasks,
    );
  }

  /**
   * `PATCH /api/v1/tasks/{id}`: change the time, priority or payload of a task that has not started.
   * @throws ConflictError (`TASK_STATE_CONFLICT`) once it started
   */
  async patch(id: string, changes: TaskPatchBody): Promise<TaskView> {
    return this.http.patch<TaskView>(apiPath('tasks', id), changes);
  }

  /** Moves a task that has not started to `scheduledAt` (RFC 3339 with offset, or a Date; null: now). */
  async reschedule(id: string, scheduledAt: string | Date | null): Promise<TaskView> {
    if (scheduledAt instanceof Date && Number.isNaN(scheduledAt.getTime()))
      throw new RequestBodyError('scheduled_at: an invalid Date (its time is NaN)');
    return this.patch(id, { scheduled_at: scheduledAt instanceof Date ? scheduledAt.toISOString() : scheduledAt });
  }

  /**
   * `POST /api/v1/tasks/{id}/cancel`: `status` CANCELLED (200), or RUNNING with `cancel_requested`
   * while its handler is being aborted (202). @throws ConflictError when it already ended
   */
  async cancel(id: string): Promise<TaskCancelView> {
    return (await this.http.request<TaskCancelView>('POST', apiPath('tasks', id, 'cancel'))).body;
  }

  /** `GET /api/v1/tasks/{id}/attempts/{attempt}/logs`: the `ctx.log` lines kept for an attempt. */
  async attemptLog(id: string, attempt: number): Promise<AttemptLogView> {
    return this.http.get<AttemptLogView>(apiPath('tasks', id, 'attempts', attempt, 'logs'));
  }

  /** `POST /api/v1/tasks/{id}/logs`: log lines of a running attempt, as an external worker reports them. */
  async appendLogs(id: string, body: AttemptLogAppendBody): Promise<Record<string, unknown>> {
    return (await this.http.request<Record<string, unknown>>('POST', apiPath('tasks', id, 'logs'), { body })).body;
  }

  /**
   * Waits until the task ends (SUCCEEDED, FAILED, DEAD or CANCELLED): long polls of
   * `GET /api/v1/tasks/{id}?wait=S` (plain polling against a server without them).
   * @returns the task's final view
   * @throws WaitTimeoutError (with the last view) after `timeoutMs`; NotFoundError for an unknown id
   */
  async wait(id: string, options: WaitOptions): Promise<TaskView> {
    return waitForStatus<TaskView>(this.http, id, apiPath('tasks', id), TERMINAL_TASK_STATUSES, options);
  }
}

/** A value as a refusal names it: `null`, `an array`, `a string`. */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return value === undefined ? 'undefined' : `a ${typeof value}`;
}
