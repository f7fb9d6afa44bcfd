import { TASK_STATES, TaskState } from '../domain/task';
import { NewWorkflow, WorkflowRecord, WorkflowTaskSummary } from '../domain/workflow';
import { iso } from './task-json';

/** Acknowledgement of a workflow submission (202). */
export interface WorkflowAck {
  workflow_id: string;
  name: string | null;
  status: 'RUNNING';
  created_at: string;
  /** Every task in input order: its workflow-local id, its task id and its first state. */
  tasks: Array<{ id: string; task_id: string; status: string }>;
}

export function workflowAckJson(w: NewWorkflow): WorkflowAck {
  return {
    workflow_id: w.id,
    name: w.name,
    status: 'RUNNING',
    created_at: iso(w.createdAt) as string,
    tasks: w.tasks.map((t) => ({ id: t.workflowTaskId, task_id: t.id, status: t.state })),
  };
}

/** The API's view of a workflow; with `tasks`, each task's state, timings and dependencies. */
export function workflowJson(w: WorkflowRecord, tasks?: WorkflowTaskSummary[]): Record<string, unknown> {
  const json: Record<string, unknown> = {
    workflow_id: w.id,
    name: w.name,
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
    const counts = Object.fromEntries(TASK_STATES.map((s) => [s, 0])) as Record<TaskState, number>;
    for (const t of tasks) counts[t.state]++;
    json.task_counts = counts;
    json.tasks = tasks.map((t) => ({
      id: t.workflowTaskId,
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
      error: t.error,
    }));
  }
  return json;
}
