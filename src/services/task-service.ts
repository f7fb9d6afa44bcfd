import type { Logger } from 'pino';
import type { Config } from '../config';
import { iso, SubmitAck, taskJson, TaskPageView, TaskView } from '../contract/task-json';
import { AttemptLogJson, attemptLogJson } from '../contract/attempt-log-json';
import {
  batchSubmissionSchema,
  deadLetterQuerySchema,
  listTasksQuerySchema,
  taskPatchSchema,
  taskSubmissionSchema,
} from '../contract/task-schemas';
import { assertJsonSize } from '../contract/json-size';
import { SchemaValidator } from '../contract/validation';
import type { DeadLetterQuery, ListTasksQuery, ServiceQuery, TaskBatchBody, TaskPatchBody, TaskSubmissionBody } from '../contract/types';
import { NOT_A_DATE_TIME, parseIsoWithOffset } from '../contract/iso-date';
import { Clock } from '../domain/clock';
import { ServiceUnavailableError, TaskInWorkflowError, TaskNotFoundError, TaskStateConflictError, ValidationError } from '../domain/errors';
import { NewTask, TaskRecord, TaskState, TERMINAL_STATES } from '../domain/task';
import { registeredTaskTypes } from '../handlers/registry';
import { PayloadChecks } from '../handlers/payload-schemas';
import { SchedulerMetrics } from '../observability/metrics';
import { Store, UpdateWaitingChanges } from '../storage/store';
import { buildNewTask, SubmitOptions } from './build-task';
import { BUILD_CHUNK, mapYielding, storeSubmissions } from './submit-tasks';
import { checkTraceparent } from '../contract/traceparent';
import { inSubmissionSpan, TaskSpans } from '../observability/task-spans';
import { limitAsString, pageLimit } from '../contract/page-limit';
import { Caller, canAccess, OPEN_CALLER } from '../tenancy/caller';
import { tenantFilter, withCallerTenant } from '../tenancy/scope';
import type { SubmissionGuard } from './submission-guard';
import type { SchedulingGateway, TaskEndPublisher } from './ports';
import type { ResultWaiters } from './result-waiters';

/** Response of a cancel: `code` is the HTTP status the REST API answers with. */
export interface CancelResponse {
  code: 200 | 202;
  /** `cancelled_at`: when it became CANCELLED (200); null while a running one is being stopped (202). */
  body: { task_id: string; status: TaskState; cancelled_at: string | null; cancel_requested: boolean };
}

export interface TaskServiceDeps {
  store: Store;
  clock: Clock;
  config: Config;
  metrics: SchedulerMetrics;
  log: Logger;
  gateway: SchedulingGateway;
  /** Backpressure at submission (rate limits, waiting caps); none: everything is admitted. */
  guard?: SubmissionGuard;
  /** Submission spans (tracing configured); absent or null: none, and the caller's traceparent is stored as given. */
  spans?: TaskSpans | null;
  /** The payload checks at submission (shared by the services); absent: the built-ins' only. */
  payloads?: PayloadChecks;
  /** The `?wait=` long polls; absent: a wait answers at once. */
  waiters?: ResultWaiters;
  /** Where cancels are announced as ends (the waiters listen); absent: not announced. */
  taskEnds?: TaskEndPublisher;
}

/** A long poll's bounds: `timeoutMs` (ms), and `signal`, aborted when the client goes away. */
export interface WaitOptions {
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * TaskService: the one place where operations are defined (docs/DESIGN.md §2). REST routes and the
 * actor-message API are thin adapters over it; both get the same validation and the same typed
 * errors (see `domain/errors.ts`). A submission is acknowledged only after the store committed it.
 */
export class TaskService {
  private readonly validator = new SchemaValidator();
  private readonly taskTypes: Set<string>;
  private readonly payloads: PayloadChecks;
  private readonly batchSchema: object;
  private accepting = true;

  constructor(private readonly deps: TaskServiceDeps) {
    this.taskTypes = new Set(registeredTaskTypes(deps.config.handlers));
    this.payloads = deps.payloads ?? new PayloadChecks(deps.config.handlers);
    this.batchSchema = batchSubmissionSchema(deps.config.batchMaxTasks);
  }

  /** Registered task types, sorted. */
  get registeredTypes(): string[] {
    return [...this.taskTypes].sort();
  }

  /**
   * Validates and stores one task. @returns the acknowledgement (202 body)
   * @param options.traceparent W3C trace context of the submitter: kept with the task, or, while
   *   the service traces, the parent of the submission span, whose context is kept instead
   * @throws ValidationError | UnknownTaskTypeError (400; field `traceparent` when it is malformed),
   *   ServiceUnavailableError (503)
   */
  submit(body: TaskSubmissionBody, caller: Caller = OPEN_CALLER, options: SubmitOptions = {}): Promise<SubmitAck> {
    return inSubmissionSpan(this.deps.spans, this.deps.clock, 'submit task', options.traceparent, async (span) => {
      this.validator.assert(taskSubmissionSchema, body);
      const checked = checkTraceparent(options.traceparent);
      const s = withCallerTenant(body, caller);
      const task = buildNewTask(s, '', this.deps.clock.now(), this.deps.config, this.taskTypes, this.payloads);
      task.traceparent = span?.traceparent ?? checked;
      span?.describe([task]);
      const [ack] = await this.storeTasks([task], () => '');
      return ack;
    });
  }

  /**
   * Validates and stores up to `batchMaxTasks` tasks atomically: all are stored or none. One
   * `options.traceparent` applies to every task of the batch (while the service traces, the
   * batch's one submission span does: the tasks of a batch share its trace).
   * @throws ValidationError naming `tasks[i].field` for the first bad item
   */
  submitBatch(body: TaskBatchBody, caller: Caller = OPEN_CALLER, options: SubmitOptions = {}): Promise<{ tasks: SubmitAck[] }> {
    return inSubmissionSpan(this.deps.spans, this.deps.clock, 'submit batch', options.traceparent, async (span) => {
      this.validator.assert(this.batchSchema, body);
      const checked = checkTraceparent(options.traceparent);
      const traceparent = span?.traceparent ?? checked;
      const items = body.tasks;
      const now = this.deps.clock.now();
      const tasks = await mapYielding(items, BUILD_CHUNK, (s, i) => {
        const task = buildNewTask(
          withCallerTenant(s, caller, `tasks[${i}].metadata`),
          `tasks[${i}].`,
          now,
          this.deps.config,
          this.taskTypes,
          this.payloads,
        );
        task.traceparent = traceparent;
        return task;
      });
      span?.describe(tasks);
      return { tasks: await this.storeTasks(tasks, (i) => `tasks[${i}].`) };
    });
  }

  /** @throws TaskNotFoundError (also for another tenant's task) */
  async get(id: string, include?: { attempts?: boolean }, caller: Caller = OPEN_CALLER): Promise<TaskView> {
    const task = await this.deps.store.getTask(id);
    if (!task || !canAccess(caller, task.tenantId)) throw new TaskNotFoundError(id);
    return taskJson(task, include?.attempts ? await this.deps.store.getAttempts(id) : undefined);
  }

  /**
   * {@link get} as a long poll (`?wait=`): answers as soon as the task is terminal (SUCCEEDED,
   * FAILED, DEAD, CANCELLED), at once if it already is, otherwise after `wait.timeoutMs` with its
   * current state; the same view as {@link get} either way.
   * @throws TaskNotFoundError (also when the task is deleted meanwhile); TooManyWaitersError (429)
   *   when this node holds `waits.maxWaiters` long polls
   */
  async getWhenEnded(id: string, include: { attempts?: boolean }, caller: Caller, wait: WaitOptions): Promise<TaskView> {
    const read = () => this.get(id, include, caller);
    const first = await read();
    if (!this.deps.waiters) return first;
    return this.deps.waiters.wait(first, {
      kind: 'task',
      id,
      // A workflow cancel wakes the waiters of the workflow's tasks.
      ...(first.workflow_id ? { workflowIds: [first.workflow_id] } : {}),
      timeoutMs: wait.timeoutMs,
      read,
      done: (v) => TERMINAL_STATES.has(v.status),
      ...(wait.signal ? { signal: wait.signal } : {}),
    });
  }

  /**
   * The kept `ctx.log` lines of attempt `attempt` of a task (bounded per attempt: the last 200
   * lines, 64 KiB; domain/attempt-log.ts); no lines for an attempt that logged nothing.
   * @throws TaskNotFoundError (also for another tenant's task); ValidationError (`attempt`) for an
   *   attempt the task has not started
   */
  async attemptLog(id: string, attempt: number, caller: Caller = OPEN_CALLER): Promise<AttemptLogJson> {
    if (typeof attempt !== 'number' || !Number.isInteger(attempt) || attempt < 1) {
      throw new ValidationError('attempt', 'must be an integer of at least 1');
    }
    const task = await this.deps.store.getTask(id);
    if (!task || !canAccess(caller, task.tenantId)) throw new TaskNotFoundError(id);
    if (attempt > task.attempts) {
      throw new ValidationError('attempt', `task ${id} has started ${task.attempts} attempt(s); there is no attempt ${attempt}`);
    }
    return attemptLogJson(await this.deps.store.getAttemptLog(id, attempt));
  }

  /**
   * Lists tasks newest first, as summaries (no `payload` or `result`: a page of 1,000 large tasks
   * must not become a gigabyte response; GET one task for those). `query`: {status, task_type,
   * queue, idempotency_key, tenant (an admin's filter; a tenant's key sees its own tenant only),
   * limit (1..1000, default 50), cursor}.
   * @throws ValidationError for a bad filter, limit or cursor, or a tenant key naming another tenant
   */
  async list(query: ServiceQuery<ListTasksQuery>, caller: Caller = OPEN_CALLER): Promise<TaskPageView> {
    const q = limitAsString<ListTasksQuery>(query);
    this.validator.assertQuery(listTasksQuerySchema, q);
    const page = await this.deps.store.listTasks({
      status: q.status,
      taskType: q.task_type,
      queue: q.queue,
      idempotencyKey: q.idempotency_key,
      tenantId: tenantFilter(caller, q.tenant),
      cursor: q.cursor,
      limit: pageLimit(q.limit),
    });
    return { tasks: page.tasks.map((t) => taskJson(t, undefined, { summary: true })), next_cursor: page.nextCursor };
  }

  /**
   * Changes a task that has not started its next attempt (SCHEDULED, PENDING, RETRYING, BLOCKED,
   * OVERFLOW): `scheduled_at` (ISO-8601 with offset, or null for now), `priority`, `payload`. A new
   * time makes it SCHEDULED (later) or PENDING (now or past), and its partition owner is told; a
   * held (OVERFLOW) task stays held, and its release follows the new time and priority.
   * @returns the task as it is now
   * @throws ValidationError (400); TaskNotFoundError; TaskStateConflictError (409, `details.state`)
   *   once the task is RUNNING or finished. `body` is validated here whatever its declared type:
   *   REST and the actor messages hand it over unchecked.
   */
  async update(id: string, body: TaskPatchBody, caller: Caller = OPEN_CALLER): Promise<TaskView> {
    this.validator.assert(taskPatchSchema, body);
    const seen = await this.assertVisibleTask(id, caller);
    const b = body;
    const changes: UpdateWaitingChanges = {};
    if (b.scheduled_at !== undefined) {
      const at = b.scheduled_at === null ? null : parseIsoWithOffset(b.scheduled_at);
      if (at === null && b.scheduled_at !== null) throw new ValidationError('scheduled_at', NOT_A_DATE_TIME);
      changes.scheduledAt = at;
    }
    if (b.priority !== undefined) changes.priority = b.priority;
    if (b.payload !== undefined) {
      assertJsonSize(b.payload, this.deps.config.maxPayloadBytes, 'payload');
      // A built-in type's payload is checked as at submission; the type is the task's own.
      const task = seen ?? (await this.deps.store.getTask(id));
      if (!task) throw new TaskNotFoundError(id);
      if (!Object.prototype.hasOwnProperty.call(this.deps.config.externalQueues ?? {}, task.queue))
        this.payloads.assert(task.taskType, b.payload, 'payload');
      changes.payload = b.payload;
    }
    const res = await this.deps.store.updateWaitingTask(id, changes, this.deps.clock.now());
    if (res.kind === 'not_found') throw new TaskNotFoundError(id);
    if (res.kind === 'conflict') throw new TaskStateConflictError(id, res.task.state, 'update');
    if (res.entry) this.deps.gateway.tasksStored([res.entry]);
    return taskJson(res.task);
  }

  /**
   * Lists the dead-letter queue (DEAD tasks), newest first, as summaries. `query`: {task_type,
   * queue, tenant, since (ISO-8601 with offset: finished at or after), limit (1..1000, default 50),
   * cursor}. @throws ValidationError for a bad filter, limit or cursor
   */
  async listDeadLetter(query: ServiceQuery<DeadLetterQuery>, caller: Caller = OPEN_CALLER): Promise<TaskPageView> {
    const q = limitAsString<DeadLetterQuery>(query);
    this.validator.assertQuery(deadLetterQuerySchema, q);
    let since: number | undefined;
    if (q.since !== undefined) {
      since = parseIsoWithOffset(q.since) ?? undefined;
      if (since === undefined) throw new ValidationError('since', NOT_A_DATE_TIME);
    }
    const page = await this.deps.store.listTasks({
      status: 'DEAD',
      taskType: q.task_type,
      queue: q.queue,
      tenantId: tenantFilter(caller, q.tenant),
      completedSince: since,
      cursor: q.cursor,
      limit: pageLimit(q.limit),
    });
    return { tasks: page.tasks.map((t) => taskJson(t, undefined, { summary: true })), next_cursor: page.nextCursor };
  }

  /**
   * Replays a DEAD task: back to PENDING with a fresh retry budget; its history is kept.
   * @throws TaskNotFoundError; TaskStateConflictError (409) when the task is not DEAD
   */
  async replayDeadLetter(id: string, caller: Caller = OPEN_CALLER): Promise<{ task_id: string; status: 'PENDING' }> {
    await this.assertVisibleTask(id, caller);
    const entry = await this.deps.store.replayDead(id, this.deps.clock.now());
    if (!entry) throw await this.notDead(id, 'replay');
    this.deps.gateway.tasksStored([entry]);
    return { task_id: id, status: 'PENDING' };
  }

  /**
   * Deletes a DEAD task and its history.
   * @throws TaskNotFoundError; TaskStateConflictError (409) when the task is not DEAD;
   *   TaskInWorkflowError (409) for a workflow's task (kept with its workflow)
   */
  async deleteDeadLetter(id: string, caller: Caller = OPEN_CALLER): Promise<{ task_id: string; deleted: true }> {
    // A task's workflow never changes: read once, it stays true for the delete below.
    const task = (await this.assertVisibleTask(id, caller)) ?? (await this.deps.store.getTask(id));
    if (task?.workflowId) {
      // Not in the dead-letter queue at all: that first (it cannot be replayed either).
      if (task.state !== 'DEAD') throw new TaskStateConflictError(id, task.state, 'delete from the dead-letter queue');
      throw new TaskInWorkflowError(id, task.workflowId, 'delete from the dead-letter queue');
    }
    if (!(await this.deps.store.deleteDead(id))) throw await this.notDead(id, 'delete from the dead-letter queue');
    return { task_id: id, deleted: true };
  }

  /** 404 for a task of another tenant (a tenant's key never learns that the id exists). */
  /** @returns the task when it had to be read to check the caller's tenant (null for an admin, who sees all) */
  private async assertVisibleTask(id: string, caller: Caller): Promise<TaskRecord | null> {
    if (caller.admin) return null;
    const task = await this.deps.store.getTask(id);
    if (!task || !canAccess(caller, task.tenantId)) throw new TaskNotFoundError(id);
    return task;
  }

  private async notDead(id: string, operation: string): Promise<Error> {
    const task = await this.deps.store.getTask(id);
    return task ? new TaskStateConflictError(id, task.state, operation) : new TaskNotFoundError(id);
  }

  /**
   * Cancels a task: waiting → CANCELLED (200, with `cancelled_at`); RUNNING → its handler's signal
   * aborts (202, `cancel_requested: true`, `cancelled_at` null).
   * @throws TaskNotFoundError; TaskStateConflictError (409) for a terminal task, including a
   *   second cancel of a task already CANCELLED
   */
  async cancel(id: string, caller: Caller = OPEN_CALLER): Promise<CancelResponse> {
    await this.assertVisibleTask(id, caller);
    const res = await this.deps.store.cancelTask(id, this.deps.clock.now());
    switch (res.kind) {
      case 'not_found':
        throw new TaskNotFoundError(id);
      case 'conflict':
        throw new TaskStateConflictError(id, res.task.state, 'cancel');
      case 'cancelled':
        this.deps.gateway.tasksEnded([id]);
        this.deps.taskEnds?.publish({ taskIds: [id] });
        return {
          code: 200,
          body: {
            task_id: id,
            status: 'CANCELLED',
            cancelled_at: iso(res.task.completedAt ?? this.deps.clock.now()),
            cancel_requested: false,
          },
        };
      case 'cancelling':
        this.deps.gateway.abortRunning(id, res.task.attempts);
        return { code: 202, body: { task_id: id, status: 'RUNNING', cancelled_at: null, cancel_requested: true } };
    }
  }

  /** Refuses new submissions from now on (shutdown). */
  stopAccepting(): void {
    this.accepting = false;
  }

  /** False once {@link stopAccepting} was called (readiness reports it). */
  get isAccepting(): boolean {
    return this.accepting;
  }

  /** {@link storeSubmissions}, while the service accepts submissions. @throws ServiceUnavailableError (503) when shutting down */
  private async storeTasks(tasks: NewTask[], fieldPrefix: (i: number) => string): Promise<SubmitAck[]> {
    if (!this.accepting) throw new ServiceUnavailableError('shutting down');
    return storeSubmissions(this.deps, tasks, fieldPrefix);
  }
}
