/**
 * Workflow reads (no writes, no group commit): getWorkflow, getWorkflowTasks, listWorkflows.
 * They read committed data only (WAL snapshot); a workflow and its tasks are always consistent
 * because every write to them happens in one savepoint.
 */
import type Database from 'better-sqlite3';
import { TaskState } from '../../../domain/task';
import { WorkflowRecord, WorkflowTaskSummary } from '../../../domain/workflow';
import { decodeCursor, encodeCursor } from '../../cursor';
import { WorkflowListQuery, WorkflowPage } from '../../store';
import { parseJson } from '../../sql/row-mapping';
import { WorkflowRow, workflowFromRow } from '../../sql/workflow-rows';

export interface WorkflowReads {
  getWorkflow(id: string): WorkflowRecord | null;
  getWorkflowTasks(id: string): WorkflowTaskSummary[];
  listWorkflows(q: WorkflowListQuery): WorkflowPage;
}

export function prepareWorkflowReads(db: Database.Database): WorkflowReads {
  const byId = db.prepare(`SELECT * FROM workflows WHERE id = ?`);
  const tasks = db.prepare(`
    SELECT id, workflow_task_id, task_type, state, unmet_deps, attempts, created_at, started_at, completed_at, duration_ms, error
    FROM tasks WHERE workflow_id = ? ORDER BY seq`);
  const edges = db.prepare(`
    SELECT e.downstream_id AS downstream, u.workflow_task_id AS upstream
    FROM tasks u JOIN workflow_edges e ON e.upstream_id = u.id
    WHERE u.workflow_id = ? ORDER BY u.seq`);
  return {
    getWorkflow: (id) => {
      const row = byId.get(id) as WorkflowRow | undefined;
      return row ? workflowFromRow(row) : null;
    },
    getWorkflowTasks: (id) => {
      const deps = new Map<string, string[]>();
      for (const e of edges.all(id) as Array<{ downstream: string; upstream: string }>) {
        const list = deps.get(e.downstream);
        if (list) list.push(e.upstream);
        else deps.set(e.downstream, [e.upstream]);
      }
      return (tasks.all(id) as Array<Record<string, unknown>>).map((r) => ({
        taskId: r.id as string,
        workflowTaskId: r.workflow_task_id as string,
        taskType: r.task_type as string,
        state: r.state as TaskState,
        dependencies: deps.get(r.id as string) ?? [],
        unmetDependencies: r.unmet_deps as number,
        attempts: r.attempts as number,
        createdAt: r.created_at as number,
        startedAt: r.started_at as number | null,
        completedAt: r.completed_at as number | null,
        durationMs: r.duration_ms as number | null,
        error: parseJson(r.error as string | null) as WorkflowTaskSummary['error'],
      }));
    },
    listWorkflows: (q) => {
      const where: string[] = [];
      const args: unknown[] = [];
      const filter = (clause: string, value: unknown): void => {
        where.push(clause);
        args.push(value);
      };
      if (q.status) filter('status = ?', q.status);
      if (q.tenantId) filter('tenant_id = ?', q.tenantId);
      if (q.cursor !== undefined) filter('seq < ?', decodeCursor(q.cursor));
      const sql = `SELECT * FROM workflows ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY seq DESC LIMIT ?`;
      const rows = db.prepare(sql).all(...args, q.limit + 1) as WorkflowRow[];
      const page = rows.slice(0, q.limit).map(workflowFromRow);
      const nextCursor = rows.length > q.limit && page.length > 0 ? encodeCursor(page[page.length - 1].seq) : null;
      return { workflows: page, nextCursor };
    },
  };
}
