/**
 * claimTasks — inputs: ids, workerId, now, leaseMs. Transition `claim`: PENDING → RUNNING with
 * attempts + 1, worker_id, started_at = now, lease_expires_at = now + leaseMs, cancel flag cleared.
 * Output: ClaimedTask for each id whose compare-and-set on PENDING won (others are skipped:
 * cancelled, already claimed). Guarantee: one attempt number is handed out once.
 */
import type Database from 'better-sqlite3';
import { ClaimedTask } from '../../../domain/task';
import { parseJson, RETRY_COLUMNS, retryFromRow, TaskRow } from '../row-mapping';

export function prepareClaimTasks(
  db: Database.Database,
): (ids: string[], workerId: string, now: number, leaseMs: number) => ClaimedTask[] {
  const stmt = db.prepare(`
    UPDATE tasks SET state = 'RUNNING', attempts = attempts + 1, worker_id = ?, started_at = ?,
      lease_expires_at = ?, cancel_requested = 0, updated_at = ?
    WHERE id = ? AND state = 'PENDING'
    RETURNING id, attempts, task_type, payload, timeout_seconds, idempotency_key, due_at,
      ${RETRY_COLUMNS}, partition, tenant_id`);
  return (ids, workerId, now, leaseMs) => {
    const claimed: ClaimedTask[] = [];
    for (const id of ids) {
      const r = stmt.get(workerId, now, now + leaseMs, now, id) as TaskRow | undefined;
      if (!r) continue;
      claimed.push({
        id: r.id,
        attempt: r.attempts,
        taskType: r.task_type,
        payload: parseJson(r.payload),
        timeoutSeconds: r.timeout_seconds,
        idempotencyKey: r.idempotency_key,
        dueAt: r.due_at,
        retry: retryFromRow(r),
        partition: r.partition,
        tenantId: r.tenant_id,
        startedAt: now,
      });
    }
    return claimed;
  };
}
