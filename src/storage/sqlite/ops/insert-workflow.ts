/**
 * insertWorkflow — inputs: a validated NewWorkflow (tasks in topological or input order, each with
 * its state — roots PENDING or SCHEDULED, the others BLOCKED — its workflow-local id and the task
 * ids it depends on). Writes the workflow row (RUNNING, open_tasks = task count), every task row
 * (`unmet_deps` = its number of dependencies) and every edge. Output: none.
 * Guarantee: one group-commit savepoint, so the whole DAG is stored or none of it (a duplicate
 * workflow or task id throws and rolls everything back).
 */
import type Database from 'better-sqlite3';
import { NewWorkflow } from '../../../domain/workflow';
import { rankOfPriority } from '../row-mapping';

export function prepareInsertWorkflow(db: Database.Database): (workflow: NewWorkflow) => void {
  const workflow = db.prepare(`
    INSERT INTO workflows (id, name, tenant_id, metadata, status, task_count, open_tasks, created_at, updated_at)
    VALUES (?, ?, ?, ?, 'RUNNING', ?, ?, ?, ?)`);
  const task = db.prepare(`
    INSERT INTO tasks (id, partition, task_type, payload, priority, queue, tenant_id, correlation_id,
      idempotency_key, metadata, max_retries, retry_backoff, retry_delay_seconds, max_retry_delay_seconds,
      retry_jitter, retry_base, timeout_seconds, scheduled_at, due_at, state, created_at, updated_at,
      workflow_id, workflow_task_id, unmet_deps)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const edge = db.prepare(`INSERT INTO workflow_edges (upstream_id, downstream_id) VALUES (?, ?)`);
  return (w) => {
    workflow.run(w.id, w.name, w.tenantId, JSON.stringify(w.metadata), w.tasks.length, w.tasks.length, w.createdAt, w.createdAt);
    for (const t of w.tasks) {
      task.run(
        t.id,
        t.partition,
        t.taskType,
        t.payload === undefined ? null : JSON.stringify(t.payload),
        rankOfPriority(t.priority),
        t.queue,
        t.tenantId,
        t.correlationId,
        null,
        JSON.stringify(t.metadata),
        t.retry.maxRetries,
        t.retry.backoff,
        t.retry.delaySeconds,
        t.retry.maxDelaySeconds ?? null,
        t.retry.jitter === undefined ? null : t.retry.jitter ? 1 : 0,
        t.retry.attemptBase ?? 0,
        t.timeoutSeconds,
        t.scheduledAt,
        t.dueAt,
        t.state,
        t.createdAt,
        t.createdAt,
        w.id,
        t.workflowTaskId,
        t.dependsOn.length,
      );
      for (const up of t.dependsOn) edge.run(up, t.id);
    }
  };
}
