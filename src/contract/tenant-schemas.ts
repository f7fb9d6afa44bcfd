/** JSON Schemas of the tenant, rate-limit and concurrency-limit admin API (docs/TENANTS.md). */

import { CONCURRENCY_KEY_PATTERN, MAX_RUNNING_LIMIT } from '../domain/concurrency-limits';
import { TENANT_ID_PATTERN } from '../domain/tenant-id';
import { WELL_FORMED_TEXT } from './well-formed-text';

const rateLimit = {
  type: 'object',
  additionalProperties: false,
  required: ['rate_per_second'],
  properties: {
    /** At least 0.001 (one start per 1,000 s). */
    rate_per_second: { type: 'number', minimum: 0.001, maximum: 1_000_000 },
    /** Starts at once, a whole number (Cloud Tasks' `maxBurstSize`, BullMQ's limiter `max`); default 1: starts evenly spaced, at most `rate_per_second` in any 1 s window. */
    burst: { type: 'integer', minimum: 1, maximum: 1_000_000 },
  },
} as const;

/** `PUT /api/v1/tenants/{id}`: weight in the round-robin and a limit on the tenant's starts. */
export const tenantPutSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    /** 0.001 to 1,000,000: a weight of 5e-324 was taken, and in the round-robin such a tenant was never picked while another had work. */
    weight: { type: 'number', minimum: 0.001, maximum: 1_000_000 },
    rate_limit: { anyOf: [rateLimit, { type: 'null' }] },
  },
} as const;

/** `PUT /api/v1/rate-limits/{task_type}`. */
export const rateLimitPutSchema = rateLimit;

/** A tenant id in a path: the tenant id syntax of domain/tenant-id.ts (as `metadata.tenant_id`). */
export const tenantIdParamsSchema = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', pattern: TENANT_ID_PATTERN } },
} as const;

export const taskTypeParamsSchema = {
  type: 'object',
  required: ['task_type'],
  properties: { task_type: { type: 'string', minLength: 1, maxLength: 200, pattern: WELL_FORMED_TEXT } },
} as const;

/** `PUT /api/v1/concurrency-limits/{key}`: the attempts of tasks with the key that may run at once. */
export const concurrencyLimitPutSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['max_running'],
  properties: { max_running: { type: 'integer', minimum: 1, maximum: MAX_RUNNING_LIMIT } },
} as const;

export const concurrencyKeyParamsSchema = {
  type: 'object',
  required: ['key'],
  properties: { key: { type: 'string', pattern: CONCURRENCY_KEY_PATTERN } },
} as const;
