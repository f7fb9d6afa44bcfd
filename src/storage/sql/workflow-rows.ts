/**
 * A `workflows` row and its record, shared by the SQL adapters (SQLite and PostgreSQL store the
 * same columns and value shapes: times in epoch ms, metadata as JSON text, flags as 0/1).
 */
import { WorkflowRecord, WorkflowStatus } from '../../domain/workflow';
import { parseJson } from './row-mapping';

/** A `workflows` row as the SQL drivers return it. */
export interface WorkflowRow {
  seq: number;
  id: string;
  name: string | null;
  tenant_id: string;
  metadata: string;
  status: string;
  task_count: number;
  open_tasks: number;
  cancel_requested: number;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
}

/** The workflow record of a row. */
export function workflowFromRow(r: WorkflowRow): WorkflowRecord {
  return {
    id: r.id,
    seq: r.seq,
    workflowName: r.name,
    tenantId: r.tenant_id,
    metadata: parseJson(r.metadata) as Record<string, unknown>,
    status: r.status as WorkflowStatus,
    taskCount: r.task_count,
    openTasks: r.open_tasks,
    cancelRequested: r.cancel_requested === 1,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    completedAt: r.completed_at,
  };
}
