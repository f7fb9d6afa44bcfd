/**
 * TypeScript types of request bodies and queries, derived from their JSON Schemas
 * (json-schema-to-ts), so a schema and the type the services read cannot drift: change a schema
 * and the code that reads the body stops compiling where it no longer fits.
 * The services still validate at run time what they are given (REST hands the body over
 * unchecked, see api/routes, and so does the actor-message API): these types describe a valid
 * request, they do not make one valid.
 */
import type { FromSchema } from 'json-schema-to-ts';
import type {
  cronCreateSchema,
  cronPatchSchema,
  cronPreviewSchema,
  cronRunsQuerySchema,
  getCronQuerySchema,
  listCronsQuerySchema,
} from './cron-schemas';
import type {
  externalCheckpointSchema,
  externalCompletionSchema,
  externalHeartbeatSchema,
  externalProgressSchema,
} from './external-schemas';
import type {
  deadLetterQuerySchema,
  getTaskQuerySchema,
  listTasksQuerySchema,
  taskPatchSchema,
  taskSubmissionSchema,
} from './task-schemas';
import type { concurrencyLimitPutSchema, rateLimitPutSchema, tenantPutSchema } from './tenant-schemas';
import type { listWorkflowsQuerySchema, workflowSubmissionSchema } from './workflow-schemas';
import type { externalLogsSchema, leaseRequestSchema } from './external-schemas';

/** `POST /api/v1/tasks`, one task of a batch, and a cron's or a workflow task's template fields. */
export type TaskSubmissionBody = FromSchema<typeof taskSubmissionSchema>;

/** `POST /api/v1/tasks/batch`: 1..`batchMaxTasks` submissions (the bound is the config's, checked at run time). */
export interface TaskBatchBody {
  tasks: TaskSubmissionBody[];
}

/** `PATCH /api/v1/tasks/{id}`. */
export type TaskPatchBody = FromSchema<typeof taskPatchSchema>;

/** `GET /api/v1/tasks/{id}` query. */
export type GetTaskQuery = FromSchema<typeof getTaskQuerySchema>;

/** `GET /api/v1/tasks` filters. */
export type ListTasksQuery = FromSchema<typeof listTasksQuerySchema>;

/** `GET /api/v1/dead-letter` filters. */
export type DeadLetterQuery = FromSchema<typeof deadLetterQuerySchema>;

/** `POST /api/v1/cron-tasks`. */
export type CronCreateBody = FromSchema<typeof cronCreateSchema>;

/** `PATCH /api/v1/cron-tasks/{id}`. */
export type CronPatchBody = FromSchema<typeof cronPatchSchema>;

/** `POST /api/v1/cron-tasks/preview`. */
export type CronPreviewBody = FromSchema<typeof cronPreviewSchema>;

/** `GET /api/v1/cron-tasks/{id}` (and `POST /api/v1/cron-tasks`) query: `preview`. */
export type GetCronQuery = FromSchema<typeof getCronQuerySchema>;

/** `GET /api/v1/cron-tasks` filters. */
export type ListCronsQuery = FromSchema<typeof listCronsQuerySchema>;

/** `GET /api/v1/cron-tasks/{id}/runs` query. */
export type CronRunsQuery = FromSchema<typeof cronRunsQuerySchema>;

/** `POST /api/v1/workflows`. */
export type WorkflowSubmissionBody = FromSchema<typeof workflowSubmissionSchema>;

/** `GET /api/v1/workflows` filters. */
export type ListWorkflowsQuery = FromSchema<typeof listWorkflowsQuerySchema>;

/** `PUT /api/v1/tenants/{id}`. */
export type TenantPutBody = FromSchema<typeof tenantPutSchema>;

/** `PUT /api/v1/rate-limits/{task_type}`. */
export type RateLimitPutBody = FromSchema<typeof rateLimitPutSchema>;

/** `PUT /api/v1/concurrency-limits/{key}`. */
export type ConcurrencyLimitPutBody = FromSchema<typeof concurrencyLimitPutSchema>;

/** `POST /api/v1/tasks/{id}/complete`. */
export type ExternalCompletionBody = FromSchema<typeof externalCompletionSchema>;

/** `POST /api/v1/tasks/{id}/heartbeat`. */
export type ExternalHeartbeatBody = FromSchema<typeof externalHeartbeatSchema>;

/** `POST /api/v1/tasks/{id}/checkpoint`. */
export type ExternalCheckpointBody = FromSchema<typeof externalCheckpointSchema>;

/** `POST /api/v1/tasks/{id}/progress`. */
export type ExternalProgressBody = FromSchema<typeof externalProgressSchema>;

/**
 * A query as a service takes it: REST gives every parameter as a string (the schema's type); the
 * actor-message API may give a number or a boolean (`{limit: 10}`, `{enabled: false}`), which the
 * service reads as its string and validates as such.
 */
export type ServiceQuery<Q> = { [K in keyof Q]?: Q[K] | number | boolean };

/** `POST /api/v1/queues/{queue}/lease`. */
export type LeaseRequestBody = FromSchema<typeof leaseRequestSchema>;

/** `POST /api/v1/tasks/{id}/logs`. */
export type ExternalLogsBody = FromSchema<typeof externalLogsSchema>;
