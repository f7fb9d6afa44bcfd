/**
 * JSON Schemas of the cron API (docs/DESIGN.md §7, §10). Task fields are those of a task submission
 * (task-schemas.ts) minus `scheduled_at` and `idempotency_key`: the schedule decides when, and
 * each instance's id is already unique per fire time.
 */
import { ISO_WITH_OFFSET, taskSubmissionSchema } from './task-schemas';
import { WELL_FORMED_TEXT } from './well-formed-text';

const { scheduled_at: _scheduledAt, idempotency_key: _idempotencyKey, ...taskFields } = taskSubmissionSchema.properties;

/** Definition fields other than the task template. */
const definitionFields = {
  name: { type: 'string', minLength: 1, maxLength: 200, pattern: WELL_FORMED_TEXT },
  cron_expression: { type: 'string', minLength: 1, maxLength: 500, pattern: WELL_FORMED_TEXT },
  timezone: { type: 'string', minLength: 1, maxLength: 100, pattern: WELL_FORMED_TEXT },
  overlap_policy: { type: 'string', enum: ['skip', 'queue', 'cancel_running'] },
  catch_up: { type: 'string', enum: ['none', 'latest', 'all'] },
  max_catch_up: { type: 'integer', minimum: 1, maximum: 1000 },
  enabled: { type: 'boolean' },
} as const;

/** `POST /api/v1/cron-tasks`. */
export const cronCreateSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'cron_expression', 'task_type'],
  properties: { ...definitionFields, ...taskFields },
} as const;

/** `PATCH /api/v1/cron-tasks/{id}`: any definition or task field; at least one. */
export const cronPatchSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { ...definitionFields, ...taskFields },
} as const;

/** `POST /api/v1/cron-tasks/preview`. */
export const cronPreviewSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['cron_expression'],
  properties: {
    cron_expression: definitionFields.cron_expression,
    timezone: definitionFields.timezone,
    from: { type: 'string', pattern: ISO_WITH_OFFSET },
    count: { type: 'integer', minimum: 1, maximum: 100 },
  },
} as const;

/** `GET /api/v1/cron-tasks/{id}?preview=N`. */
export const getCronQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: { preview: { type: 'string', pattern: '^(100|[1-9][0-9]?)$' } },
} as const;

/** `GET /api/v1/cron-tasks` filters. */
export const listCronsQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    enabled: { type: 'string', enum: ['true', 'false'] },
    tenant: { type: 'string', minLength: 1, pattern: WELL_FORMED_TEXT },
    limit: { type: 'string', pattern: '^[0-9]{1,4}$' },
    cursor: { type: 'string', minLength: 1, maxLength: 200 },
  },
} as const;

/** `GET /api/v1/cron-tasks/{id}/runs`. */
export const cronRunsQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'string', pattern: '^[0-9]{1,4}$' },
    cursor: { type: 'string', minLength: 1, maxLength: 200 },
  },
} as const;
