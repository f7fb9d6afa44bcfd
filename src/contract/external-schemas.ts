import { progressValueSchema } from './progress-schema';

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
 * `{attempt, result?}` (the attempt succeeded) or `{attempt, error: {message, permanent?, type?}}`
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
          description: 'error class or reason, shown as `error.type` (default `ExternalError`)',
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
