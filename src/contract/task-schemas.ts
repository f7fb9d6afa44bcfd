/**
 * JSON Schemas of the task API (docs/DESIGN.md §10, snake_case). The same objects validate REST bodies
 * (fastify) and actor-message requests (the service's Ajv), so both reject the same input with
 * the same field path.
 */

import { ISO_WITH_OFFSET } from './iso-date';
import { CONCURRENCY_KEY_PATTERN } from '../domain/concurrency-limits';
import { TENANT_ID_PATTERN } from '../domain/tenant-id';
import { waitQueryProperty } from './wait-query';
import { WELL_FORMED_TEXT } from './well-formed-text';

/** The pattern of every date field: RFC 3339 with an offset (contract/iso-date.ts). */
export { ISO_WITH_OFFSET };

export const taskSubmissionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['task_type'],
  properties: {
    task_type: { type: 'string', minLength: 1, maxLength: 200, pattern: WELL_FORMED_TEXT },
    payload: {},
    priority: { type: 'string', enum: ['high', 'medium', 'low'] },
    scheduled_at: { type: ['string', 'null'], pattern: ISO_WITH_OFFSET },
    max_retries: { type: 'integer', minimum: 0, maximum: 1000 },
    retry_backoff: { type: 'string', enum: ['exponential', 'fixed', 'linear'] },
    retry_delay_seconds: { type: 'number', minimum: 0, maximum: 86400 },
    max_retry_delay_seconds: { type: 'number', minimum: 0, maximum: 604800 },
    retry_jitter: { type: 'boolean' },
    timeout_seconds: { type: 'number', minimum: 0.001, maximum: 604800 },
    idempotency_key: { type: ['string', 'null'], minLength: 1, maxLength: 256, pattern: WELL_FORMED_TEXT },
    queue: { type: 'string', minLength: 1, maxLength: 200, pattern: WELL_FORMED_TEXT },
    concurrency_key: { type: ['string', 'null'], pattern: CONCURRENCY_KEY_PATTERN },
    metadata: {
      type: 'object',
      properties: {
        /** The tenant id syntax of domain/tenant-id.ts. */
        tenant_id: { type: 'string', pattern: TENANT_ID_PATTERN },
        correlation_id: { type: ['string', 'null'], maxLength: 200, pattern: WELL_FORMED_TEXT },
      },
    },
  },
} as const;

/** `POST /api/v1/tasks/batch`: at most `maxItems` tasks (config `batchMaxTasks`). */
export function batchSubmissionSchema(maxItems: number) {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['tasks'],
    properties: {
      tasks: { type: 'array', minItems: 1, maxItems, items: taskSubmissionSchema },
    },
  } as const;
}

export const taskIdParamsSchema = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1, maxLength: 1000, pattern: WELL_FORMED_TEXT } },
} as const;

export const getTaskQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: { include: { type: 'string', enum: ['attempts'] }, wait: waitQueryProperty },
} as const;

/** `PATCH /api/v1/tasks/{id}`: at least one of the fields. */
export const taskPatchSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    scheduled_at: taskSubmissionSchema.properties.scheduled_at,
    priority: taskSubmissionSchema.properties.priority,
    payload: {},
  },
} as const;

/** `GET /api/v1/dead-letter` filters. */
export const deadLetterQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    task_type: { type: 'string', minLength: 1, pattern: WELL_FORMED_TEXT },
    queue: { type: 'string', minLength: 1, pattern: WELL_FORMED_TEXT },
    tenant: { type: 'string', minLength: 1, pattern: WELL_FORMED_TEXT },
    since: { type: 'string', pattern: ISO_WITH_OFFSET },
    limit: { type: 'string', pattern: '^[0-9]{1,4}$' },
    cursor: { type: 'string', minLength: 1, maxLength: 200 },
  },
} as const;

export const listTasksQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    status: {
      type: 'string',
      enum: ['SCHEDULED', 'PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'RETRYING', 'DEAD', 'CANCELLED', 'BLOCKED', 'OVERFLOW'],
    },
    task_type: { type: 'string', minLength: 1, pattern: WELL_FORMED_TEXT },
    queue: { type: 'string', minLength: 1, pattern: WELL_FORMED_TEXT },
    idempotency_key: { type: 'string', minLength: 1, maxLength: 256, pattern: WELL_FORMED_TEXT },
    tenant: { type: 'string', minLength: 1, pattern: WELL_FORMED_TEXT },
    limit: { type: 'string', pattern: '^[0-9]{1,4}$' },
    cursor: { type: 'string', minLength: 1, maxLength: 200 },
  },
} as const;
