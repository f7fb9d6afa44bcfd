import { TASK_STATES, TaskError, TaskState } from '../domain/task';
import { NewWorkflow, WorkflowRecord, WorkflowStatus, WorkflowTaskSummary } from '../domain/workflow';
import { iso } from './task-json';
import { taskErrorJson } from './error-json';

/**
 * Acknowledgement of a workflow submission (202), in the specification's shape: `tasks` maps each
 * workflow-local id (the request's `tasks[i].task_id`) to its first state, and `task_ids` maps it
 * to the scheduler's own task id (for `GET /api/v1/tasks/{task_id}`). Both keep input order, except
 * that JavaScript puts integer-like keys ("1", "2") first, in ascending order.
 */
export interface WorkflowAck {
  workflow_id: string;
  workflow_name: string | null;
  status: 'RUNNING';
  created_at: string;
  tasks: Record<string, string>;
  task_ids: Record<string, string>;
}

/** One task of a workflow read by id (`task_details`), in input order. */
export interface WorkflowTaskView {
  /** The workflow-local id (the request's `tasks[i].task_id`). */
  workflow_task_id: string;
  task_id: string;
  task_type: string;
  status: TaskState;
  /** Workflow-local ids. */
  dependencies: string[];
  unmet_dependencies: number;
  attempts: number;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  duration_ms: number | null;
  error: TaskError | null;
}

/**
 * A workflow as the workflow routes answer it (response schema `workflowSchema`,
 * api/openapi/responses.ts). A read by id adds the maps, the counts and `task_details`; a list entry
 * has none of them.
 */
export interface WorkflowView {
  workflow_id: string;
  workflow_name: string | null;
  status: WorkflowStatus;
  metadata: Record<string, unknown>;
  task_count: number;
  open_tasks: number;
  cancel_requested: boolean;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  /** Local id → current state. */
  tasks?: Record<string, TaskState>;
  /** Local id → the scheduler's task id. */
  task_ids?: Record<string, string>;
  task_counts?: Record<TaskState, number>;
  task_details?: WorkflowTaskView[];
}

/** A page of workflows, without their tasks (`GET /api/v1/workflows`). */
export interface WorkflowPageView {
  workflows: WorkflowView[];
  next_cursor: string | null;
}

/** Local id → value for each task. `Object.fromEntries` defines own keys, so `__proto__` is a plain key. */
function byLocalId<T, V extends string>(tasks: readonly T[], localId: (t: T) => string, value: (t: T) => V): Record<string, V> {
  return Object.fromEntries(tasks.map((t) => [localId(t), value(t)]));
}

export function workflowAckJson(w: NewWorkflow): WorkflowAck {
  return {
    workflow_id: w.id,
    workflow_name: w.workflowName,
    status: 'RUNNING',
    created_at: iso(w.createdAt),
    tasks: byLocalId(
      w.tasks,
      (t) => t.workflowTaskId,
      (t) => t.state,
    ),
    task_ids: byLocalId(
      w.tasks,
      (t) => t.workflowTaskId,
      (t) => t.id,
    ),
  };
}

/**
 * The API's view of a workflow. With `tasks` (a read by id): the maps of the acknowledgement
 * (`tasks`: local id → current state, `task_ids`: local id → task id), `task_counts` by state, and
 * `task_details`, one entry per task in input order: `workflow_task_id` (the local id, as in
 * `GET /api/v1/tasks/{task_id}`), `task_id`, type, state, dependencies (local ids), timings, error.
 */
export function workflowJson(w: WorkflowRecord, tasks?: WorkflowTaskSummary[]): WorkflowView {
  const json: WorkflowView = {
    workflow_id: w.id,
    workflow_name: w.workflowName,
    status: w.status,
    metadata: { ...w.metadata, tenant_id: w.tenantId },
    task_count: w.taskCount,
    open_tasks: w.openTasks,
    cancel_requested: w.cancelRequested,
    created_at: iso(w.createdAt),
    updated_at: iso(w.updatedAt),
    completed_at: iso(w.completedAt),
  };
  if (tasks) {
    json.tasks = byLocalId(
      tasks,
      (t) => t.workflowTaskId,
      (t) => t.state,
    );
    json.task_ids = byLocalId(
      tasks,
      (t) => t.workflowTaskId,
      (t) => t.taskId,
    );
    const counts = Object.fromEntries(TASK_STATES.map((s) => [s, 0])) as Record<TaskState, number>;
    for (const t of tasks) counts[t.state]++;
    json.task_counts = counts;
    json.task_details = tasks.map((t) => ({
      workflow_task_id: t.workflowTaskId,
      task_id: t.taskId,
      task_type: t.taskType,
      status: t.state,
      dependencies: t.dependencies,
      unmet_dependencies: t.state === 'BLOCKED' ? t.unmetDependencies : 0,
      attempts: t.attempts,
      created_at: iso(t.createdAt),
      started_at: iso(t.startedAt),
      completed_at: iso(t.completedAt),
      duration_ms: t.durationMs,
      error: taskErrorJson(t.error),
    }));
  }
  return json;
}
