/**
 * JSON Schemas of the workflow API (docs/DESIGN.md §8, §10). A workflow task takes the same fields as a
 * single task submission (the same schema pieces, so the same checks and field paths), plus its
 * workflow-local `task_id` and `dependencies` (the specification's spelling: `workflow_name`,
 * `tasks[].task_id`), and without `idempotency_key` (a workflow task's identity is its place in
 * the workflow). The graph itself (unique ids, known dependencies, no cycle, size)
 * is checked by `domain/dag/validate-dag.ts`, which names every culprit.
 */
import { taskSubmissionSchema } from './task-schemas';
import { waitQueryProperty } from './wait-query';
import { WELL_FORMED_TEXT } from './well-formed-text';

const { idempotency_key: _notInWorkflows, ...taskFields } = taskSubmissionSchema.properties;

/** A workflow-local task id: 1–200 characters. */
const localId = { type: 'string', minLength: 1, maxLength: 200, pattern: WELL_FORMED_TEXT } as const;

export const workflowTaskSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['task_id', 'task_type'],
  properties: {
    task_id: localId,
    dependencies: { type: 'array', items: localId },
    ...taskFields,
  },
} as const;

/** `POST /api/v1/workflows`. The task count limit is checked first, by the service. */
export const workflowSubmissionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['tasks'],
  properties: {
    workflow_name: { type: ['string', 'null'], maxLength: 200, pattern: WELL_FORMED_TEXT },
    tasks: { type: 'array', items: workflowTaskSchema },
    metadata: taskSubmissionSchema.properties.metadata,
  },
} as const;

export const workflowIdParamsSchema = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1, maxLength: 1000, pattern: WELL_FORMED_TEXT } },
} as const;

/** `GET /api/v1/workflows/{id}` options: `wait` (a long poll). */
export const getWorkflowQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: { wait: waitQueryProperty },
} as const;

/** `GET /api/v1/workflows` filters. */
export const listWorkflowsQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    status: { type: 'string', enum: ['RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'] },
    tenant: { type: 'string', minLength: 1, pattern: WELL_FORMED_TEXT },
    limit: { type: 'string', pattern: '^[0-9]{1,4}$' },
    cursor: { type: 'string', minLength: 1, maxLength: 200 },
  },
} as const;
