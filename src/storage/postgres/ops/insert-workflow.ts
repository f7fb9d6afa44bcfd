/**
 * insertWorkflow — inputs: a validated NewWorkflow (tasks in input order, each with its state —
 * roots PENDING or SCHEDULED, the others BLOCKED — its workflow-local id and the task ids it
 * depends on). Writes the workflow row (RUNNING, open_tasks = task count), every task row (through
 * insertTasks, then their workflow columns in one statement: `unmet_deps` = the number of
 * dependencies) and every edge (one statement). Output: each task's seq, in input order.
 * Guarantee: one transaction, so the whole DAG is stored or none of it: a duplicate workflow or
 * task id throws (unique violation) and rolls everything back; another node never sees a part of it.
 */
import type { Db } from '../db';
import { NewTask } from '../../../domain/task';
import { NewWorkflow } from '../../../domain/workflow';
import { insertTasks } from './insert-tasks';

export async function insertWorkflow(db: Db, w: NewWorkflow): Promise<number[]> {
  await db.query(
    `INSERT INTO workflows (id, name, tenant_id, metadata, status, task_count, open_tasks, created_at, updated_at)
     VALUES ($1, $2, $3, $4, 'RUNNING', $5, $5, $6, $6)`,
    [w.id, w.workflowName, w.tenantId, JSON.stringify(w.metadata), w.tasks.length, w.createdAt],
  );
  // Workflow tasks carry no idempotency key, so insertTasks stores each one as given (BLOCKED too).
  const stored = await insertTasks(
    db,
    w.tasks.map((t) => ({ ...t, idempotencyKey: null, idempotency: undefined }) as unknown as NewTask),
  );
  await db.query(
    `UPDATE tasks t SET workflow_id = $1, workflow_task_id = x.local, unmet_deps = x.unmet
     FROM unnest($2::text[], $3::text[], $4::int[]) AS x(id, local, unmet) WHERE t.id = x.id`,
    [w.id, w.tasks.map((t) => t.id), w.tasks.map((t) => t.workflowTaskId), w.tasks.map((t) => t.dependsOn.length)],
  );
  const edges = w.tasks.flatMap((t) => t.dependsOn.map((up) => [up, t.id] as const));
  if (edges.length > 0) {
    await db.query(`INSERT INTO workflow_edges (upstream_id, downstream_id) SELECT * FROM unnest($1::text[], $2::text[])`, [
      edges.map((e) => e[0]),
      edges.map((e) => e[1]),
    ]);
  }
  return stored.map((r) => r.seq);
}
