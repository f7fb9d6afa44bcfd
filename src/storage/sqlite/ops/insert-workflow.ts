/**
 * insertWorkflow — inputs: a validated NewWorkflow (tasks in input order, each with its state —
 * roots PENDING or SCHEDULED, the others BLOCKED — its workflow-local id and the task ids it
 * depends on). Writes the workflow row (RUNNING, open_tasks = task count), every task row (through
 * insertTasks' statement, then its workflow columns: `unmet_deps` = its number of dependencies)
 * and every edge. Output: each task's seq (its rowid), in input order.
 * Guarantee: one group-commit savepoint, so the whole DAG is stored or none of it (a duplicate
 * workflow or task id throws and rolls everything back).
 */
import type Database from 'better-sqlite3';
import { NewTask } from '../../../domain/task';
import { NewWorkflow } from '../../../domain/workflow';
import { prepareInsertTasks } from './insert-tasks';

export function prepareInsertWorkflow(db: Database.Database): (workflow: NewWorkflow) => number[] {
  const workflow = db.prepare(`
    INSERT INTO workflows (id, name, tenant_id, metadata, status, task_count, open_tasks, created_at, updated_at)
    VALUES (?, ?, ?, ?, 'RUNNING', ?, ?, ?, ?)`);
  const insertTasks = prepareInsertTasks(db);
  const place = db.prepare(`UPDATE tasks SET workflow_id = ?, workflow_task_id = ?, unmet_deps = ? WHERE id = ?`);
  const edge = db.prepare(`INSERT INTO workflow_edges (upstream_id, downstream_id) VALUES (?, ?)`);
  return (w) => {
    workflow.run(w.id, w.workflowName, w.tenantId, JSON.stringify(w.metadata), w.tasks.length, w.tasks.length, w.createdAt, w.createdAt);
    // Workflow tasks carry no idempotency key, so insertTasks stores each one as given (BLOCKED too).
    const stored = insertTasks(w.tasks.map((t) => ({ ...t, idempotencyKey: null, idempotency: undefined }) as unknown as NewTask));
    for (const t of w.tasks) {
      place.run(w.id, t.workflowTaskId, t.dependsOn.length, t.id);
      for (const up of t.dependsOn) edge.run(up, t.id);
    }
    return stored.map((r) => r.seq);
  };
}
