/**
 * Workflow reads (no writes, on the pool): getWorkflow, getWorkflowTasks, listWorkflows.
 * Inputs: a workflow id, or a list query (status, tenant, limit, cursor of src/storage/cursor.ts).
 * Outputs: the workflow record or null; its tasks in submission order with their dependencies'
 * workflow-local ids (none for an unknown id); a page newest first with the cursor of the next.
 * Guarantee: each read is one statement, so one snapshot: a workflow's tasks and their counts are
 * seen as one committed transaction left them (every write to them is one transaction).
 */
import type { Db } from '../db';
import { TaskState } from '../../../domain/task';
import { WorkflowRecord, WorkflowTaskSummary } from '../../../domain/workflow';
import { decodeCursor, encodeCursor } from '../../cursor';
import { WorkflowListQuery, WorkflowPage } from '../../store';
import { parseJson } from '../../sql/row-mapping';
import { WorkflowRow, workflowFromRow } from '../../sql/workflow-rows';

export async function getWorkflow(db: Db, id: string): Promise<WorkflowRecord | null> {
  const row = (await db.query<WorkflowRow>(`SELECT * FROM workflows WHERE id = $1`, [id])).rows[0];
  return row ? workflowFromRow(row) : null;
}

interface SummaryRow {
  id: string;
  workflow_task_id: string;
  task_type: string;
  state: string;
  unmet_deps: number;
  attempts: number;
  created_at: number;
  started_at: number | null;
  completed_at: number | null;
  duration_ms: number | null;
  error: string | null;
  deps: string[];
}

export async function getWorkflowTasks(db: Db, id: string): Promise<WorkflowTaskSummary[]> {
  const { rows } = await db.query<SummaryRow>(
    `SELECT t.id, t.workflow_task_id, t.task_type, t.state, t.unmet_deps, t.attempts, t.created_at, t.started_at, t.completed_at,
       t.duration_ms, t.error,
       ARRAY(SELECT u.workflow_task_id FROM workflow_edges e JOIN tasks u ON u.id = e.upstream_id
             WHERE e.downstream_id = t.id ORDER BY u.seq) AS deps
     FROM tasks t WHERE t.workflow_id = $1 ORDER BY t.seq`,
    [id],
  );
  return rows.map((r) => ({
    taskId: r.id,
    workflowTaskId: r.workflow_task_id,
    taskType: r.task_type,
    state: r.state as TaskState,
    dependencies: r.deps,
    unmetDependencies: r.unmet_deps,
    attempts: r.attempts,
    createdAt: r.created_at,
    startedAt: r.started_at,
    completedAt: r.completed_at,
    durationMs: r.duration_ms,
    error: parseJson(r.error) as WorkflowTaskSummary['error'],
  }));
}

/**
 * @throws ValidationError (field `cursor`) for a cursor this API did not return
 */
export async function listWorkflows(db: Db, q: WorkflowListQuery): Promise<WorkflowPage> {
  const where: string[] = [];
  const args: unknown[] = [];
  const filter = (clause: string, value: unknown): void => {
    args.push(value);
    where.push(clause.replace('?', `$${args.length}`));
  };
  if (q.status) filter('status = ?', q.status);
  if (q.tenantId) filter('tenant_id = ?', q.tenantId);
  if (q.cursor !== undefined) filter('seq < ?', decodeCursor(q.cursor));
  args.push(q.limit + 1);
  const sql = `SELECT * FROM workflows ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY seq DESC LIMIT $${args.length}`;
  const rows = (await db.query<WorkflowRow>(sql, args)).rows;
  const page = rows.slice(0, q.limit).map(workflowFromRow);
  const nextCursor = rows.length > q.limit && page.length > 0 ? encodeCursor(page[page.length - 1].seq) : null;
  return { workflows: page, nextCursor };
}
