/**
 * Document mapping of workflows in the MongoDB adapter: the `workflows` document and its record.
 * The workflow fields of task documents are in documents.ts (`WorkflowTaskFields`).
 */
import { WORKFLOW_STATUSES, WorkflowRecord, WorkflowStatus } from '../../domain/workflow';
import { fromJson } from './documents';

/** Statuses a workflow document has while its insert is under way or being undone; never shown. */
export const INTERNAL_WORKFLOW_STATUSES = ['CREATING', 'RELEASING', 'ABORTING'] as const;
export type InternalWorkflowStatus = (typeof INTERNAL_WORKFLOW_STATUSES)[number];

/** A `workflows` document; `_id` is the workflow id. */
export interface WorkflowDoc {
  _id: string;
  seq: number;
  name: string | null;
  tenant_id: string;
  metadata: string;
  /** RUNNING, SUCCEEDED, FAILED, CANCELLED; or an internal status while inserted (CREATING, RELEASING) or undone (ABORTING). */
  status: WorkflowStatus | InternalWorkflowStatus;
  task_count: number;
  open_tasks: number;
  cancel_requested: boolean;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
}

/** Whether a workflow document is visible to readers (its insert completed). */
export function isVisibleWorkflow(d: Pick<WorkflowDoc, 'status'>): boolean {
  return (WORKFLOW_STATUSES as readonly string[]).includes(d.status);
}

export function workflowFromDoc(d: WorkflowDoc): WorkflowRecord {
  return {
    id: d._id,
    seq: d.seq,
    workflowName: d.name,
    tenantId: d.tenant_id,
    metadata: fromJson(d.metadata) as Record<string, unknown>,
    status: d.status as WorkflowStatus,
    taskCount: d.task_count,
    openTasks: d.open_tasks,
    cancelRequested: d.cancel_requested === true,
    createdAt: d.created_at,
    updatedAt: d.updated_at,
    completedAt: d.completed_at,
  };
}
