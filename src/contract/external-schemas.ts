import { ISO_WITH_OFFSET } from './iso-date';
import { progressValueSchema } from './progress-schema';
import { WELL_FORMED_TEXT } from './well-formed-text';

/**
 * JSON Schemas of the external-consumer reports: `POST /api/v1/tasks/{id}/complete`,
 * `/heartbeat`, `/checkpoint` and `/progress`. Shared by REST (route schemas, OpenAPI) and the actor
 * messages; the service validates with them (no coercion, unknown fields refused).
 */

const attempt = {
  type: 'integer',
  minimum: 1,
  maximum: 1_000_000_000,
  description: 'the attempt number from the stream entry (`attempt` field): fencing token of the report',
} as const;

/**
 * `{attempt, result?}` (the attempt succeeded) or `{attempt, error: {message, permanent?, type?, code?, stack?}}`
 * (it failed: retried with backoff unless `permanent`). `result` and `error` together are refused
 * by the service (field `error`).
 */
export const externalCompletionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['attempt'],
  properties: {
    attempt,
    result: { description: 'the result to store (any JSON, at most `maxResultBytes`); absent or null: no result' },
    error: {
      type: 'object',
      additionalProperties: false,
      required: ['message'],
      description: 'the attempt failed',
      properties: {
        message: { type: 'string', minLength: 1, maxLength: 10_000 },
        permanent: {
          type: 'boolean',
          description: 'true: no retry (the task ends FAILED); default false (retried while attempts remain, else DEAD)',
        },
        type: {
          type: 'string',
          minLength: 1,
          maxLength: 200,
          pattern: WELL_FORMED_TEXT,
          description: 'error class or reason, shown as `error.type` (default `ExternalError`)',
        },
        code: {
          type: 'string',
          minLength: 1,
          maxLength: 200,
          pattern: WELL_FORMED_TEXT,
          description: "the error's code (`ECONNRESET`, `card_declined`), shown as `error.code`",
        },
        stack: {
          type: 'string',
          maxLength: 65_536,
          description: 'the stack trace, kept cut to its first 30 lines and 4,096 characters, shown as `error.stack`',
        },
      },
    },
  },
} as const;

/** `{attempt}`: the consumer is still working on the attempt; its lease is extended by `leaseMs`. */
export const externalHeartbeatSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['attempt'],
  properties: { attempt },
} as const;

/**
 * `{attempt, value}`: the attempt's checkpoint (any JSON, at most 64 KiB as JSON text; null clears
 * it), stored for the task's next attempt to resume from.
 */
export const externalCheckpointSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['attempt', 'value'],
  properties: {
    attempt,
    value: { description: 'any JSON value of at most 64 KiB as JSON text; null clears the checkpoint' },
  },
} as const;

/** `{attempt, progress}`: the attempt's progress, shown by GET /api/v1/tasks/{id}. */
export const externalProgressSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['attempt', 'progress'],
  properties: { attempt, progress: progressValueSchema },
} as const;

/** `POST /api/v1/queues/{queue}/lease`: the queue's name (as in `externalQueues`). */
export const queueParamsSchema = {
  type: 'object',
  required: ['queue'],
  properties: {
    queue: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      pattern: WELL_FORMED_TEXT,
      description: 'a pull queue (`externalQueues` with `transport: "http"`)',
    },
  },
} as const;

/** Most attempts one lease request may take. */
export const MAX_LEASE_TASKS = 100;
/** Longest wait of one lease request, in seconds. */
export const MAX_LEASE_WAIT_S = 30;

/**
 * `{worker_id, max?, wait_s?}`: a pull worker asks for up to `max` (1–100, default 1) due tasks
 * of the queue, waiting up to `wait_s` seconds (0–30, default 0: answer at once) for one.
 */
export const leaseRequestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['worker_id'],
  properties: {
    worker_id: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      pattern: WELL_FORMED_TEXT,
      description: "the worker's own id; its attempts carry `worker_id` `http:<worker_id>`",
    },
    max: { type: 'integer', minimum: 1, maximum: MAX_LEASE_TASKS, description: 'most tasks to hand out (default 1)' },
    wait_s: {
      type: 'number',
      minimum: 0,
      maximum: MAX_LEASE_WAIT_S,
      description: 'seconds to wait for a task when none is ready (long poll; default 0)',
    },
  },
} as const;

/** Most lines in one `POST /api/v1/tasks/{id}/logs`. */
export const MAX_POSTED_LOG_LINES = 200;

/**
 * `{attempt, lines: [{level, msg, at?, fields?}]}`: log lines of an external attempt, kept with it
 * (the bounds of `ctx.log`: each line cut to 4096 characters, the attempt's last 200 lines and
 * 64 KiB of text).
 */
export const externalLogsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['attempt', 'lines'],
  properties: {
    attempt,
    lines: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_POSTED_LOG_LINES,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['level', 'msg'],
        properties: {
          level: { type: 'string', enum: ['debug', 'info', 'warn', 'error'] },
          msg: { type: 'string', maxLength: 65_536, description: 'the message (cut to 4096 characters)' },
          at: {
            type: 'string',
            pattern: ISO_WITH_OFFSET,
            description: 'RFC 3339 time it was logged, with its offset (default: when it arrives)',
          },
          fields: { type: 'object', description: 'structured fields (left out when longer than 4096 characters as JSON)' },
        },
      },
    },
  },
} as const;
