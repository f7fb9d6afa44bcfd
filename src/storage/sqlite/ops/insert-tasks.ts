/**
 * insertTasks — inputs: validated NewTask[] (state SCHEDULED or PENDING, due_at set).
 * Output: none. Guarantee: runs inside one group-commit savepoint, so the whole list is stored
 * or none of it (a duplicate id rolls the list back and rejects the caller).
 */
import type Database from 'better-sqlite3';
import { NewTask } from '../../../domain/task';
import { rankOfPriority } from '../row-mapping';

export function prepareInsertTasks(db: Database.Database): (tasks: NewTask[]) => void {
  const stmt = db.prepare(`
    INSERT INTO tasks (id, partition, task_type, payload, priority, queue, tenant_id, correlation_id,
      idempotency_key, metadata, max_retries, retry_backoff, retry_delay_seconds, max_retry_delay_seconds,
      retry_jitter, retry_base, timeout_seconds, scheduled_at, due_at, state, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  return (tasks) => {
    for (const t of tasks) {
      stmt.run(
        t.id,
        t.partition,
        t.taskType,
        t.payload === undefined ? null : JSON.stringify(t.payload),
        rankOfPriority(t.priority),
        t.queue,
        t.tenantId,
        t.correlationId,
        t.idempotencyKey,
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
      );
    }
  };
}
