/** Workflow (DAG) model shared by every layer (docs/DESIGN.md §8). Times are epoch milliseconds. */
import { NewTask, TaskError, TaskState } from './task';

export const WORKFLOW_STATUSES = ['RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'] as const;
/** RUNNING → SUCCEEDED (every task succeeded) | FAILED (any FAILED or DEAD) | CANCELLED. */
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number];

/** `error.type` of a task cancelled because an upstream task ended FAILED, DEAD or CANCELLED. */
export const UPSTREAM_FAILED = 'upstream_failed';
/** `error.type` of a task cancelled by a cancel of its whole workflow. */
export const WORKFLOW_CANCELLED = 'workflow_cancelled';

/** One task of a new workflow: an ordinary task plus its place in the graph. */
export interface NewWorkflowTask extends Omit<NewTask, 'state'> {
  /** Roots: PENDING (or SCHEDULED for a later `scheduledAt`); every other task BLOCKED. */
  state: 'SCHEDULED' | 'PENDING' | 'BLOCKED';
  /** The workflow-local id the caller gave the task (`tasks[i].task_id`). */
  workflowTaskId: string;
  /** Task ids (not local ids) of its distinct dependencies; its unmet count starts at their number. */
  dependsOn: string[];
}

/** A validated workflow, ready to be stored in one atomic operation. */
export interface NewWorkflow {
  id: string;
  /** The caller's name for it (`workflow_name`), if any. */
  workflowName: string | null;
  tenantId: string;
  metadata: Record<string, unknown>;
  createdAt: number;
  tasks: NewWorkflowTask[];
}

/** A stored workflow. */
export interface WorkflowRecord {
  id: string;
  seq: number;
  /** The caller's name for it (`workflow_name`; column `name`), if any. */
  workflowName: string | null;
  tenantId: string;
  metadata: Record<string, unknown>;
  status: WorkflowStatus;
  taskCount: number;
  /** Tasks not yet terminal; the workflow finishes when it reaches 0. */
  openTasks: number;
  /** The caller cancelled the workflow (its final status is CANCELLED). */
  cancelRequested: boolean;
  createdAt: number;
  updatedAt: number;
  completedAt: number | null;
}

/** One task of a stored workflow, as the workflow view shows it. */
export interface WorkflowTaskSummary {
  taskId: string;
  workflowTaskId: string;
  taskType: string;
  state: TaskState;
  /** Workflow-local ids of its dependencies. */
  dependencies: string[];
  /** Dependencies that have not succeeded yet (meaningful while BLOCKED). */
  unmetDependencies: number;
  attempts: number;
  createdAt: number;
  startedAt: number | null;
  completedAt: number | null;
  durationMs: number | null;
  error: TaskError | null;
}

/**
 * Final status of a workflow whose tasks are all terminal. A cancel by the caller wins (the tasks
 * it reached end CANCELLED, a RUNNING one may still have finished first); otherwise any FAILED or
 * DEAD task makes it FAILED; otherwise any CANCELLED task (cancelled on its own by the caller, or
 * downstream of one) makes it CANCELLED; otherwise every task SUCCEEDED.
 * @param counts how many of its tasks ended FAILED or DEAD (`failed`) and CANCELLED (`cancelled`)
 */
export function finalWorkflowStatus(counts: { failed: number; cancelled: number; cancelRequested: boolean }): WorkflowStatus {
  if (counts.cancelRequested) return 'CANCELLED';
  if (counts.failed > 0) return 'FAILED';
  if (counts.cancelled > 0) return 'CANCELLED';
  return 'SUCCEEDED';
}
