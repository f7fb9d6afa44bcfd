/**
 * The domain's errors: every error an operation reports to a caller, with a stable `code`, a
 * message, `details` and whether retrying the same request may succeed. They know no transport:
 * the HTTP status of each code is in the catalog (src/contract/error-catalog.ts, checked against
 * docs/API.md by a test), read only by the REST API (src/api/error-handler.ts). The errors of the
 * HTTP transport itself are in src/api/http-errors.ts; the error body that crosses a process
 * boundary is in the catalog's file.
 */
export abstract class SchedulerError extends Error {
  abstract readonly code: string;
  /** True when the same request may succeed later without change. */
  readonly retryable: boolean = false;

  constructor(
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }

  /** The JSON body of an error response: `{error: {code, message, details}}`. */
  toJSON(): { error: { code: string; message: string; details: Record<string, unknown> } } {
    return { error: { code: this.code, message: this.message, details: this.details } };
  }
}

/**
 * A request field is missing, of the wrong type or out of range. `details.field` names it, cut to
 * {@link ECHO_MAX} characters (a path into a body nested thousands of levels deep is longer).
 */
export class ValidationError extends SchedulerError {
  readonly code = 'VALIDATION_FAILED';
  constructor(field: string, reason: string, extra: Record<string, unknown> = {}) {
    const named = clipEcho(field);
    super(`${named}: ${reason}`, { field: named, reason, ...extra });
  }
}

/** Where the docs say how to register a task type (named in {@link UnknownTaskTypeError}). */
export const REGISTER_TASK_TYPE_DOCS = 'docs/API.md#task-types-and-handlers';

/** Where the docs say how a task reaches a worker of the user's own process (a pull queue). */
export const PULL_QUEUE_DOCS = 'docs/WORKERS.md';

/**
 * No handler for `task_type`: `details.registered_types`; how to register one: `config_key`, `docs`.
 * With external (pull) queues configured, their names too (`details.external_queues`): a task for a
 * worker of the user's own process needs `"queue"`, not a handler.
 */
export class UnknownTaskTypeError extends SchedulerError {
  readonly code = 'UNKNOWN_TASK_TYPE';
  constructor(field: string, taskType: string, registered: string[], externalQueues: string[] = []) {
    const shown = JSON.stringify({ handlers: { [clipEcho(taskType)]: './handlers/your-module.js' } });
    const queues = externalQueues.map((q) => JSON.stringify(q)).join(', ');
    super(
      `${field}: no handler is registered for task_type "${clipEcho(taskType)}"; registered: ${registered.join(', ')}. ` +
        (externalQueues.length > 0
          ? `If a worker of your own runs it, submit it with "queue" set to its queue (${queues}; ${PULL_QUEUE_DOCS}); otherwise r`
          : 'R') +
        `egister one under the "handlers" config key, e.g. ${shown} in the file named by SCHEDULER_CONFIG, and restart (${REGISTER_TASK_TYPE_DOCS})`,
      {
        field,
        task_type: taskType,
        registered_types: registered,
        config_key: 'handlers',
        docs: REGISTER_TASK_TYPE_DOCS,
        ...(externalQueues.length > 0 ? { external_queues: externalQueues } : {}),
      },
    );
  }
}

/**
 * The request body (`field` 'body', `bodyLimitBytes`), a task's payload (`field` 'payload' or
 * `tasks[i].payload`, `maxPayloadBytes`, then `actual_bytes` too) or metadata (`metadata`,
 * `maxMetadataBytes`; a workflow's metadata copied into its tasks, `workflowBodyLimitBytes`) is
 * larger than its cap. `note` says how `actualBytes` was counted when it is not one value's JSON.
 */
export class PayloadTooLargeError extends SchedulerError {
  readonly code = 'PAYLOAD_TOO_LARGE';
  constructor(limitBytes: number, field = 'body', actualBytes?: number, note?: string) {
    super(
      field === 'body'
        ? `request body exceeds ${limitBytes} bytes`
        : `${field}: ${actualBytes !== undefined ? `${actualBytes} bytes of JSON${note ? ` (${note})` : ''} exceed` : 'exceeds'} the ${limitBytes} bytes allowed`,
      { field, limit_bytes: limitBytes, ...(actualBytes !== undefined ? { actual_bytes: actualBytes } : {}) },
    );
  }
}

/** No task with this id (or not visible to the caller). */
export class TaskNotFoundError extends SchedulerError {
  readonly code = 'TASK_NOT_FOUND';
  constructor(taskId: string) {
    super(`task ${taskId} not found`, { task_id: taskId });
  }
}

/** No cron definition with this id (or it was deleted). */
export class CronNotFoundError extends SchedulerError {
  readonly code = 'CRON_NOT_FOUND';
  constructor(cronId: string) {
    super(`cron task ${cronId} not found`, { cron_id: cronId });
  }
}

/**
 * A cron expression that no date can ever match (`0 0 30 2 *`: no listed month has the day, and
 * day-of-week does not rescue it). Refused on create, edit and preview; nothing is stored.
 */
export class CronNeverFiresError extends SchedulerError {
  readonly code = 'CRON_NEVER_FIRES';
  /** @param fields the day fields, quoted, for the message */
  constructor(expression: string, fields: string) {
    super(`cron_expression: "${clipEcho(expression)}" can never fire: no date matches its ${fields} together`, {
      field: 'cron_expression',
      cron_expression: clipEcho(expression),
    });
  }
}

/** Longest piece of client text (a URL, a field name) quoted back in an error, in characters. */
export const ECHO_MAX = 200;

/** `text` cut to {@link ECHO_MAX} characters, ending in "…" when cut: an error never echoes kilobytes. */
export function clipEcho(text: string): string {
  return text.length <= ECHO_MAX ? text : `${text.slice(0, ECHO_MAX)}…`;
}

/** The task's current state does not allow the operation; `details.state` is that state. */
export class TaskStateConflictError extends SchedulerError {
  readonly code = 'TASK_STATE_CONFLICT';
  constructor(taskId: string, state: string, operation: string) {
    super(`cannot ${operation} task ${taskId}: it is ${state}`, { task_id: taskId, state, operation });
  }
}

/**
 * An idempotency key (per tenant) is held by a task submitted with a different request.
 * `details.task_id` is that task; null when the other use is an earlier item of the same batch
 * (`earlierItem`, e.g. `tasks[0]`), which was not stored either. Not retryable: change the key or
 * the request.
 */
export class IdempotencyConflictError extends SchedulerError {
  readonly code = 'IDEMPOTENCY_CONFLICT';
  /**
   * @param taskId the task holding the key; null when it is an earlier item of the same batch (`earlierItem`)
   * @param taskDeleted the same request's task, deleted since (dead-letter delete or retention): it is not run again
   */
  constructor(field: string, key: string, taskId: string | null, earlierItem?: string, taskDeleted = false) {
    const other = taskId === null ? `${earlierItem ?? 'an earlier item'} of this batch` : `task ${taskId}`;
    super(
      taskDeleted
        ? `${field}: key "${key}" stands for task ${taskId}, which was deleted since (dead-letter delete or retention); the request is not run again while the key is held`
        : `${field}: key "${key}" was used for a different request (${other})`,
      { field, idempotency_key: key, task_id: taskId, ...(taskDeleted ? { task_deleted: true } : {}) },
    );
  }
}

/** A state-machine edge that docs/DESIGN.md §3 does not have (a bug or a race lost). */
export class InvalidTransitionError extends SchedulerError {
  readonly code = 'INVALID_TRANSITION';
  constructor(from: string, event: string) {
    super(`no transition "${event}" from state ${from}`, { state: from, event });
  }
}

/** The service is starting or shutting down; retry shortly. */
export class ServiceUnavailableError extends SchedulerError {
  readonly code = 'SERVICE_UNAVAILABLE';
  override readonly retryable = true;
  constructor(reason: string) {
    super(`service unavailable: ${reason}`, { reason });
  }
}

/** Anything unexpected. The message is generic; the log has the cause. */
export class InternalError extends SchedulerError {
  readonly code = 'INTERNAL_ERROR';
  override readonly retryable = true;
  constructor(message = 'internal error') {
    super(message);
  }
}

/**
 * The workflow's dependency graph is not a DAG that can run (docs/DESIGN.md §8): no tasks, an id
 * used twice, a dependency on an id not in the workflow, a task depending on itself, or a cycle.
 * `details.problem` says which (`empty`, `duplicate_ids`, `unknown_dependencies`,
 * `self_dependency`, `cycle`) and the other details name the culprits (`duplicate_ids`,
 * `task_id` + `unknown_dependencies`, `task_ids`, `cycle`). Nothing is stored.
 */
export class InvalidWorkflowError extends SchedulerError {
  readonly code = 'INVALID_WORKFLOW';
  constructor(field: string, problem: string, reason: string, culprits: Record<string, unknown> = {}) {
    super(`${field}: ${reason}`, { field, problem, reason, ...culprits });
  }
}

/**
 * The workflow has more tasks than `workflowMaxTasks` (default 10,000), or more dependencies in
 * all than `workflowMaxDependencies` (default 100,000: `what` is `dependencies`). Nothing is stored.
 */
export class WorkflowTooLargeError extends SchedulerError {
  readonly code = 'WORKFLOW_TOO_LARGE';
  constructor(max: number, count: number, what: 'tasks' | 'dependencies' = 'tasks') {
    super(
      what === 'tasks'
        ? `tasks: a workflow may have at most ${max} tasks; this one has ${count}`
        : `tasks: a workflow may have at most ${max} dependencies in all; this one has ${count}` +
            ' (where every task of one layer depends on every task of the layer before, one task between the two' +
            ' that depends on all of the first and that all of the second depend on needs a + b dependencies, not a × b)',
      what === 'tasks' ? { field: 'tasks', max, count } : { field: 'tasks', limit: 'dependencies', max, count },
    );
  }
}

/** No workflow with this id (or it finished more than `resultRetentionMs` ago and was purged). */
export class WorkflowNotFoundError extends SchedulerError {
  readonly code = 'WORKFLOW_NOT_FOUND';
  constructor(workflowId: string) {
    super(`workflow ${workflowId} not found`, { workflow_id: workflowId });
  }
}

/**
 * A workflow's task cannot leave its workflow on its own (a dead-letter delete): the workflow's
 * record (its status, task count and graph) rests on every task, so its tasks are purged with it
 * (`resultRetentionMs` after it ends). `details.workflow_id`; replay the task instead.
 */
export class TaskInWorkflowError extends SchedulerError {
  readonly code = 'TASK_IN_WORKFLOW';
  constructor(taskId: string, workflowId: string, operation: string) {
    super(
      `cannot ${operation} task ${taskId}: it belongs to workflow ${workflowId}, whose record keeps it (it is purged with the workflow); replay it instead (POST /api/v1/dead-letter/${taskId}/replay)`,
      { task_id: taskId, workflow_id: workflowId, operation },
    );
  }
}

/** The workflow's status does not allow the operation (cancel of a finished workflow); `details.status`. */
export class WorkflowStateConflictError extends SchedulerError {
  readonly code = 'WORKFLOW_STATE_CONFLICT';
  constructor(workflowId: string, status: string, operation: string) {
    super(`cannot ${operation} workflow ${workflowId}: it is ${status}`, { workflow_id: workflowId, status, operation });
  }
}

/** No valid API key: `Authorization: Bearer <key>` is missing or unknown (keys are configured). */
export class UnauthorizedError extends SchedulerError {
  readonly code = 'UNAUTHORIZED';
  constructor(reason: string) {
    super(`unauthorized: ${reason}`, { reason });
  }
}

/** The API key is valid but may not do this (an admin operation with a tenant's key). */
export class ForbiddenError extends SchedulerError {
  readonly code = 'FORBIDDEN';
  constructor(operation: string) {
    super(`forbidden: ${operation} needs an admin key`, { operation });
  }
}

/**
 * The tenant submits faster than its submission rate limit. Retryable after
 * `details.retry_after_seconds` (also the `Retry-After` header).
 */
export class RateLimitedError extends SchedulerError {
  readonly code = 'RATE_LIMITED';
  override readonly retryable = true;
  constructor(tenantId: string, retryAfterSeconds: number, limit: { rate_per_second: number; burst: number }) {
    super(`tenant ${tenantId} submits faster than ${limit.rate_per_second}/s (burst ${limit.burst})`, {
      tenant_id: tenantId,
      retry_after_seconds: retryAfterSeconds,
      ...limit,
    });
  }
}

/**
 * Too many tasks are waiting (globally or for the tenant): the submission is refused, nothing was
 * stored. Near the cap low priority is refused first (`details.priority`). Retryable after
 * `details.retry_after_seconds` (also the `Retry-After` header).
 */
export class OverloadedError extends SchedulerError {
  readonly code = 'OVERLOADED';
  override readonly retryable = true;
  /** scope `overflow`: the overflow hold is full (`waiting` is its size, `cap` its `overflow.maxTasks`). */
  constructor(
    scope: 'global' | 'tenant' | 'overflow',
    details: { tenant_id: string; priority: string; waiting: number; cap: number; retry_after_seconds: number },
  ) {
    const what = scope === 'overflow' ? 'tasks in the overflow hold' : 'waiting tasks';
    super(`too many ${what} (${scope}: ${details.waiting} of ${details.cap}); ${details.priority} priority is refused now`, {
      scope,
      ...details,
    });
  }
}

/**
 * A report on an attempt of an external task (complete, heartbeat) that is not the task's current
 * RUNNING attempt: a stale or duplicated completion, an attempt whose lease expired and was retried
 * (fencing by attempt number), or a task cancelled meanwhile. `details.state` and
 * `details.current_attempt` say what the task is now. Not retryable: drop the work.
 */
export class AttemptConflictError extends SchedulerError {
  readonly code = 'ATTEMPT_CONFLICT';
  constructor(taskId: string, attempt: number, state: string, currentAttempt: number) {
    super(`task ${taskId}: attempt ${attempt} is not running (the task is ${state}, attempt ${currentAttempt})`, {
      task_id: taskId,
      attempt,
      state,
      current_attempt: currentAttempt,
    });
  }
}

/** A consumer's report on a task whose queue is not an external queue (config `externalQueues`). */
export class NotExternalTaskError extends SchedulerError {
  readonly code = 'NOT_EXTERNAL_TASK';
  constructor(taskId: string, queue: string) {
    super(`task ${taskId} is in queue "${queue}", which is not an external queue: its worker reports it`, { task_id: taskId, queue });
  }
}

/**
 * A checkpoint (`ctx.checkpoint(value)`, `POST /api/v1/tasks/{id}/checkpoint`) larger than
 * the cap (`MAX_CHECKPOINT_BYTES`, 64 KiB) as UTF-8 JSON text: nothing is stored, the previous one stays.
 * `details.limit_bytes`, `details.actual_bytes`. Not retryable: save less (a cursor, not the data).
 */
export class CheckpointTooLargeError extends SchedulerError {
  readonly code = 'CHECKPOINT_TOO_LARGE';
  /** @param field the request field at fault (`checkpoint` for a handler's call, `value` in a consumer's report body) */
  constructor(limitBytes: number, actualBytes: number, field = 'checkpoint') {
    super(`${field}: ${actualBytes} bytes of JSON exceed the ${limitBytes} bytes allowed for a checkpoint`, {
      field,
      limit_bytes: limitBytes,
      actual_bytes: actualBytes,
    });
  }
}

/**
 * The store cannot make a write durable now: its file was deleted or replaced under the service,
 * the disk is full, a write failed with an I/O error, or the database server does not answer.
 * Nothing was stored, except that a connection lost (`connection_lost`) while a PostgreSQL `COMMIT`
 * was under way may have committed it: the message says so, and a retry with the same idempotency
 * key answers the task stored then instead of making a second. `details.fault` says which (`disk_full`, `file_deleted`, …), `details.target`
 * names the file or server, `details.recoverable` whether the service resumes by itself (a freed
 * disk, a connection back) or needs its operator (docs/OPERATIONS.md "Store faults"). Retryable
 * after `details.retry_after_seconds` (also the `Retry-After` header).
 */
/** What a `connection_lost` refusal says of the write (its COMMIT's answer may be what was lost). */
const IN_DOUBT =
  'the write may or may not have been stored (the connection was lost, perhaps at its commit): retry with the same idempotency key';

export class StoreUnavailableError extends SchedulerError {
  readonly code = 'STORE_UNAVAILABLE';
  override readonly retryable = true;
  /**
   * @param fault the fault's kind (`disk_full`, `file_deleted`, `connection_lost`, …)
   * @param target the file or server
   * @param cause one line: what failed
   * @param recoverable true when the service resumes by itself once the store takes writes again
   * @param retryAfterSeconds the `Retry-After` given to the client (s)
   */
  constructor(fault: string, target: string, cause: string, recoverable: boolean, retryAfterSeconds = 5) {
    super(`store unavailable (${fault} on ${target}): ${cause}; ${fault === 'connection_lost' ? IN_DOUBT : 'nothing was stored'}`, {
      fault,
      target,
      cause,
      recoverable,
      retry_after_seconds: retryAfterSeconds,
    });
  }
}

/**
 * The store's transaction kept losing to concurrent ones: PostgreSQL refused it with a
 * serialization failure (40001, e.g. under `default_transaction_isolation = serializable`) or a
 * deadlock (40P01) on every one of its tries (the store runs a refused batch again, 5 times by
 * default). Nothing was stored; not a fault of the store (readiness does not change). Retryable
 * after `details.retry_after_seconds` (also the `Retry-After` header). `details.cause` has the
 * server's code and message, `details.tries` how often it was run.
 */
export class StoreContendedError extends SchedulerError {
  readonly code = 'STORE_CONTENDED';
  override readonly retryable = true;
  /**
   * @param cause one line: the server's code and message
   * @param tries how many times the transaction was run
   * @param retryAfterSeconds the `Retry-After` given to the client (s)
   */
  constructor(cause: string, tries: number, retryAfterSeconds = 1) {
    super(`the store refused the transaction ${tries} times for concurrent ones (${cause}); nothing was stored, retry`, {
      cause,
      tries,
      retry_after_seconds: retryAfterSeconds,
    });
  }
}

/**
 * A `?wait=` long poll refused because this node already holds `details.max_waiters` of them
 * (config `waits.maxWaiters`). Nothing is wrong with the request: read the resource without
 * `wait`, or retry after `details.retry_after_seconds` (also the `Retry-After` header).
 */
export class TooManyWaitersError extends SchedulerError {
  readonly code = 'TOO_MANY_WAITERS';
  override readonly retryable = true;
  constructor(maxWaiters: number, retryAfterSeconds = 1) {
    super(`this node already holds ${maxWaiters} waiting requests (?wait=); retry later or read without wait`, {
      max_waiters: maxWaiters,
      retry_after_seconds: retryAfterSeconds,
    });
  }
}

/**
 * A lease request (`POST /api/v1/queues/{queue}/lease`) for a queue that is not a pull queue:
 * not in `externalQueues`, or a Redis stream queue (`transport` `stream`). `details.queue`,
 * `details.transport` (`stream`, or null for a queue not configured as external). Not retryable:
 * configure the queue with `transport: "http"`.
 */
export class NotPullQueueError extends SchedulerError {
  readonly code = 'NOT_PULL_QUEUE';
  constructor(queue: string, transport: string | null) {
    super(
      transport === null
        ? `queue "${queue}" is not a pull queue: it is not in externalQueues (configure it with transport "http")`
        : `queue "${queue}" is an external queue of transport "${transport}", not a pull queue (transport "http")`,
      { queue, transport },
    );
  }
}
