/**
 * TypeScript types of request bodies, derived from their JSON Schemas (json-schema-to-ts), so a
 * schema and the type the services read cannot drift: change a schema and the code that reads the
 * body stops compiling where it no longer fits.
 */
import type { FromSchema } from 'json-schema-to-ts';
import type { taskPatchSchema, taskSubmissionSchema } from './task-schemas';

/** `POST /api/v1/tasks`, one task of a batch, and a cron's or a workflow task's template fields. */
export type TaskSubmissionBody = FromSchema<typeof taskSubmissionSchema>;

/** `PATCH /api/v1/tasks/{id}`. */
export type TaskPatchBody = FromSchema<typeof taskPatchSchema>;
