/**
 * Response schemas of the REST API, for its OpenAPI description (docs/OPERATIONS.md). They document what the
 * routes answer; they do not shape it: the app serialises every reply with `JSON.stringify`
 * (see app.ts), so a field left out here is still sent. The view types the services return
 * (`TaskView`, `CronView`, `WorkflowView` in src/contract/) are checked to fit these schemas at
 * compile time (test/unit/contract-types.test.ts).
 */
import { ERROR_CATALOG } from '../../contract/error-catalog';
import { TASK_STATES } from '../../domain/task';

const isoOrNull = { type: ['string', 'null'], format: 'date-time' } as const;
const iso = { type: 'string', format: 'date-time' } as const;

/** `{error: {code, message, details}}`: every error answer. */
export const errorSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'details'],
      properties: {
        code: { type: 'string', enum: Object.keys(ERROR_CATALOG) },
        message: { type: 'string' },
        details: { type: 'object', description: '`field` names the offending field as a path (`tasks[3].priority`)' },
      },
    },
  },
} as const;

/** 202 (or 200 for an idempotent replay) of a submission. */
export const ackSchema = {
  type: 'object',
  required: ['task_id', 'status', 'scheduled_at', 'created_at'],
  properties: {
    task_id: { type: 'string' },
    status: { type: 'string', enum: TASK_STATES },
    scheduled_at: isoOrNull,
    created_at: iso,
    idempotent_replayed: { type: 'boolean', description: 'present (true) when an earlier task with the same idempotency key answers' },
  },
} as const;

/** 200 or 202 of a task cancel. */
export const cancelSchema = {
  type: 'object',
  required: ['task_id', 'status', 'cancelled_at', 'cancel_requested'],
  properties: {
    task_id: { type: 'string' },
    status: { type: 'string', enum: ['CANCELLED', 'RUNNING'] },
    cancelled_at: { ...isoOrNull, description: 'when it became CANCELLED; null while a running one is being stopped (202)' },
    cancel_requested: { type: 'boolean' },
  },
} as const;

/** One cause of an attempt's error (nested: its own `cause` below it). */
const errorCause = {
  type: 'object',
  properties: {
    message: { type: 'string' },
    type: { type: 'string' },
    code: { type: 'string' },
    cause: { type: 'object', description: 'the next cause, same shape' },
    cause_omitted: {
      type: 'string',
      enum: ['depth', 'circular'],
      description: 'its cause was not kept: the chain is deeper than 5, or a cycle',
    },
  },
} as const;

/** An attempt's error (src/contract/error-json.ts): fields other than message, type and retryable only when known. */
const taskError = {
  type: ['object', 'null'],
  properties: {
    message: { type: 'string' },
    type: {
      type: 'string',
      description: "the error's name (`TypeError`, `PermanentError`) or a reason (`timeout`, `worker_lost`, `cancelled`)",
    },
    retryable: { type: 'boolean' },
    code: { type: 'string', description: "the error's `code` (`ECONNREFUSED`, `ERR_INVALID_URL`, …)" },
    http_status: { type: 'integer', description: 'the HTTP status of the failed request (`http` handler)' },
    exit_code: { type: ['integer', 'null'], description: 'a lost worker process: its exit code (null when a signal ended it)' },
    signal: { type: ['string', 'null'], description: 'a lost worker process: the signal that ended it (`SIGKILL`)' },
    cause: errorCause,
    cause_omitted: errorCause.properties.cause_omitted,
    stack: { type: 'string', description: 'the first 30 lines / 4096 characters of the stack' },
  },
} as const;

/** A task as `GET /api/v1/tasks/{id}` answers it (list entries leave out `payload` and `result`). */
export const taskSchema = {
  type: 'object',
  properties: {
    task_id: { type: 'string' },
    task_type: { type: 'string' },
    status: { type: 'string', enum: TASK_STATES },
    priority: { type: 'string', enum: ['high', 'medium', 'low'] },
    queue: { type: 'string' },
    concurrency_key: {
      type: ['string', 'null'],
      description: 'Tasks with the same key share its concurrency limit (`/api/v1/concurrency-limits`)',
    },
    payload: { description: 'the submitted payload (not in list entries)' },
    metadata: { type: 'object' },
    idempotency_key: { type: ['string', 'null'] },
    traceparent: { type: ['string', 'null'], description: 'W3C trace context given at submission (header `traceparent`)' },
    scheduled_at: isoOrNull,
    due_at: iso,
    created_at: iso,
    updated_at: iso,
    started_at: isoOrNull,
    completed_at: isoOrNull,
    duration_ms: { type: ['number', 'null'], description: "the handler's own run time in the worker" },
    attempts: { type: 'integer' },
    retry_base: {
      type: 'integer',
      description: 'attempts not charged to the current retry budget (made before the last dead-letter replay, and free retries)',
    },
    max_retries: { type: 'integer' },
    retry_backoff: { type: 'string' },
    retry_delay_seconds: { type: 'number' },
    max_retry_delay_seconds: { type: 'number' },
    retry_jitter: { type: 'boolean' },
    timeout_seconds: { type: 'number' },
    worker_id: { type: ['string', 'null'] },
    result: { description: "the handler's result (not in list entries)" },
    error: taskError,
    cancel_requested: { type: 'boolean' },
    cron_id: { type: 'string' },
    workflow_id: { type: 'string' },
    workflow_task_id: { type: ['string', 'null'] },
    attempt_history: { type: 'array', items: { type: 'object' }, description: 'with `?include=attempts`' },
    progress: { description: 'the last progress an attempt reported (a fraction 0..1 or `{done?, total?, message?}`), or null' },
    progress_attempt: { type: ['integer', 'null'], description: 'the attempt that reported `progress`' },
    progress_at: isoOrNull,
    checkpoint: {
      type: ['object', 'null'],
      description: 'the last checkpoint an attempt saved, or null; list entries leave out its `value`',
      properties: { attempt: { type: 'integer' }, saved_at: iso, size_bytes: { type: 'integer' }, value: {} },
    },
  },
} as const;

/** A page of a listing: `{<key>: [...], next_cursor}`. */
export function pageSchema(key: string, item: object) {
  return {
    type: 'object',
    required: [key, 'next_cursor'],
    properties: {
      [key]: { type: 'array', items: item },
      next_cursor: { type: ['string', 'null'], description: 'pass back as `cursor` for the next page; null on the last' },
    },
  };
}

/** A cron definition as the cron routes answer it. */
export const cronSchema = {
  type: 'object',
  properties: {
    cron_id: { type: 'string' },
    name: { type: 'string' },
    cron_expression: { type: 'string' },
    timezone: { type: 'string' },
    task_type: { type: 'string' },
    overlap_policy: { type: 'string' },
    catch_up: { type: 'string' },
    max_catch_up: { type: 'integer' },
    enabled: { type: 'boolean' },
    status: { type: 'string', enum: ['ACTIVE', 'PAUSED'], description: '`enabled` as the specification spells it' },
    next_fire_time: isoOrNull,
    last_fire_time: isoOrNull,
    next_fire_times: { type: 'array', items: iso, description: 'with `?preview=N`' },
    created_at: iso,
    updated_at: iso,
  },
} as const;

const localIdMap = <const V extends object>(what: string, values: V) =>
  ({
    type: 'object',
    additionalProperties: values,
    description: `workflow-local id (the request's \`tasks[i].task_id\`) → ${what}`,
  }) as const;

/**
 * A workflow as the workflow routes answer it: the submission's 202 has `tasks` and `task_ids`;
 * a read by id has them too (current states), with `task_counts` and `task_details`.
 */
export const workflowSchema = {
  type: 'object',
  properties: {
    workflow_id: { type: 'string' },
    workflow_name: { type: ['string', 'null'] },
    status: { type: 'string', enum: ['RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'] },
    metadata: { type: 'object' },
    task_count: { type: 'integer' },
    open_tasks: { type: 'integer' },
    cancel_requested: { type: 'boolean' },
    created_at: iso,
    updated_at: iso,
    completed_at: isoOrNull,
    tasks: localIdMap('its state', { type: 'string', enum: TASK_STATES }),
    task_ids: localIdMap("the scheduler's task id (`GET /api/v1/tasks/{task_id}`)", { type: 'string' }),
    task_counts: { type: 'object', additionalProperties: { type: 'integer' } },
    task_details: {
      type: 'array',
      description: 'read by id: every task in input order',
      items: {
        type: 'object',
        properties: {
          workflow_task_id: { type: 'string', description: 'the workflow-local id' },
          task_id: { type: 'string' },
          task_type: { type: 'string' },
          status: { type: 'string', enum: TASK_STATES },
          dependencies: { type: 'array', items: { type: 'string' }, description: 'workflow-local ids' },
          unmet_dependencies: { type: 'integer' },
          attempts: { type: 'integer' },
          created_at: iso,
          started_at: isoOrNull,
          completed_at: isoOrNull,
          duration_ms: { type: ['number', 'null'] },
          error: taskError,
        },
      },
    },
  },
} as const;

/** Any JSON object (answers described in prose). */
export const objectSchema = { type: 'object', additionalProperties: true } as const;

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  400: 'Invalid input: `error.details.field` names the field',
  401: 'Missing or unknown API key',
  403: 'Admin key required',
  404: 'Not found (or not visible to this key)',
  409: 'State conflict',
  413: 'Payload too large',
  415: 'Unsupported media type',
  429: 'Submission rate limit: retry after `Retry-After` seconds',
  503: 'Starting, draining or overloaded: retry after `Retry-After` seconds',
};

/**
 * A route's `response` map: the success answers given (status → schema, described by `what`)
 * plus the error answers (each the error envelope).
 * @param ok status → [description, schema]
 * @param errors HTTP statuses of the error answers the route can give
 */
export function responses(ok: Record<number, [string, object]>, errors: number[] = []): Record<number, object> {
  const out: Record<number, object> = {};
  for (const [status, [description, schema]] of Object.entries(ok)) out[Number(status)] = { description, ...schema };
  for (const status of errors) out[status] = { description: STATUS_TEXT[status] ?? 'Error', ...errorSchema };
  return out;
}
