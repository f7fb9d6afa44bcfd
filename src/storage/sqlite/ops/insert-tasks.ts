/**
 * insertTasks — inputs: validated NewTask[] (state SCHEDULED or PENDING, due_at set; optional
 * idempotency hash and expiry). Output: per task, the id that stands for it, whether it was a
 * replay, and its `seq` (the rowid, AUTOINCREMENT: increasing in submission order; 0 for a
 * replay). Guarantee: runs inside one group-commit savepoint, so the whole list is stored or none
 * of it: a duplicate id, or an idempotency key held (per tenant, until its expiry) by a request
 * with another hash, throws (an IdempotencyKeyConflict for the key) and rolls the list back; so
 * does a key whose task was deleted since (a dead-letter delete, or retention shorter than the
 * key's window): a replay never answers with a task that does not exist, and the request does not
 * run again either. The key check and the insert are one atomic step on the single writing
 * connection, so concurrent duplicates create one task.
 */
import type Database from 'better-sqlite3';
import { NewTask } from '../../../domain/task';
import { InsertResult } from '../../store';
import { IdempotencyKeyConflict } from '../../idempotency-conflict';
import { rankOfPriority } from '../../sql/row-mapping';

export function prepareInsertTasks(db: Database.Database): (tasks: NewTask[]) => InsertResult[] {
  const stmt = db.prepare(`
    INSERT INTO tasks (id, partition, task_type, payload, priority, queue, tenant_id, correlation_id,
      idempotency_key, metadata, max_retries, retry_backoff, retry_delay_seconds, max_retry_delay_seconds,
      retry_jitter, retry_base, timeout_seconds, scheduled_at, due_at, state, created_at, updated_at, traceparent,
      concurrency_key)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const heldKey = db.prepare(`SELECT task_id, request_hash, expires_at FROM idempotency_keys WHERE tenant_id = ? AND key = ?`);
  const taskExists = db.prepare(`SELECT 1 FROM tasks WHERE id = ?`).pluck();
  const holdKey = db.prepare(`
    INSERT INTO idempotency_keys (tenant_id, key, task_id, request_hash, expires_at) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (tenant_id, key) DO UPDATE SET task_id = excluded.task_id, request_hash = excluded.request_hash,
      expires_at = excluded.expires_at`);
  return (tasks) =>
    tasks.map((t) => {
      if (t.idempotencyKey !== null && t.idempotency) {
        const held = heldKey.get(t.tenantId, t.idempotencyKey) as { task_id: string; request_hash: string; expires_at: number } | undefined;
        if (held && held.expires_at > t.createdAt) {
          const same = held.request_hash === t.idempotency.requestHash;
          // A replay answers with the task the key stands for, unless that task was deleted.
          const gone = same && taskExists.get(held.task_id) === undefined;
          if (same && !gone) return { taskId: held.task_id, replayed: true, seq: 0 };
          throw new IdempotencyKeyConflict(
            `idempotency key "${t.idempotencyKey}" is held by task ${held.task_id}${gone ? ', deleted' : ''}`,
            {
              taskId: held.task_id,
              tenantId: t.tenantId,
              key: t.idempotencyKey,
              taskDeleted: gone,
            },
          );
        }
        holdKey.run(t.tenantId, t.idempotencyKey, t.id, t.idempotency.requestHash, t.idempotency.expiresAt);
      }
      const { lastInsertRowid } = stmt.run(
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
        t.traceparent ?? null,
        t.concurrencyKey ?? null,
      );
      return { taskId: t.id, replayed: false, seq: Number(lastInsertRowid) };
    });
}
