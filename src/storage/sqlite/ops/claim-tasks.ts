/**
 * claimTasks — inputs: ids, workerId, now, leaseMs. Transition `claim`: PENDING → RUNNING with
 * attempts + 1, worker_id, started_at = now, lease_expires_at = now + leaseMs, cancel flag cleared.
 * Output: ClaimedTask for each id whose compare-and-set on PENDING won (others are skipped:
 * cancelled, already claimed). A workflow task also gets its upstream tasks' results, keyed by their
 * workflow-local ids, and its submission's `traceparent`. Guarantee: one attempt number is handed out once.
 * With `epochs` (cluster mode, a fencing token per id): the compare-and-set also requires
 * owner_epoch <= epochs[i] and sets owner_epoch; a negative token never claims. Without it the
 * statement does not read owner_epoch (the embedded hot path is unchanged).
 */
import type Database from 'better-sqlite3';
import { ClaimedTask } from '../../../domain/task';
import { parseJson, RETRY_COLUMNS, retryFromRow, TaskRow } from '../row-mapping';

export function prepareClaimTasks(
  db: Database.Database,
): (ids: string[], workerId: string, now: number, leaseMs: number, epochs?: readonly number[]) => ClaimedTask[] {
  const stmt = db.prepare(`
    UPDATE tasks SET state = 'RUNNING', attempts = attempts + 1, worker_id = ?, started_at = ?,
      lease_expires_at = ?, cancel_requested = 0, updated_at = ?
    WHERE id = ? AND state = 'PENDING'
    RETURNING id, attempts, task_type, payload, timeout_seconds, idempotency_key, due_at,
      ${RETRY_COLUMNS}, partition, tenant_id, workflow_id, traceparent`);
  const fenced = db.prepare(`
    UPDATE tasks SET state = 'RUNNING', attempts = attempts + 1, worker_id = ?, started_at = ?,
      lease_expires_at = ?, cancel_requested = 0, updated_at = ?, owner_epoch = ?
    WHERE id = ? AND state = 'PENDING' AND owner_epoch <= ?
    RETURNING id, attempts, task_type, payload, timeout_seconds, idempotency_key, due_at,
      ${RETRY_COLUMNS}, partition, tenant_id, workflow_id, traceparent`);
  const upstream = db.prepare(`
    SELECT u.workflow_task_id AS key, u.result AS result FROM workflow_edges e JOIN tasks u ON u.id = e.upstream_id
    WHERE e.downstream_id = ?`);
  // fromEntries defines own properties: a local id such as "__proto__" stays a plain key.
  const upstreamResultsOf = (id: string): Record<string, unknown> =>
    Object.fromEntries((upstream.all(id) as Array<{ key: string; result: string | null }>).map((u) => [u.key, parseJson(u.result)]));
  /** The fenced claim of ids[i]: a negative (or missing) token never claims. */
  const claimFenced = (ids: string[], i: number, workerId: string, now: number, leaseMs: number, epochs: readonly number[]) => {
    const epoch = epochs[i] ?? -1;
    return epoch < 0 ? undefined : (fenced.get(workerId, now, now + leaseMs, now, epoch, ids[i], epoch) as TaskRow | undefined);
  };
  return (ids, workerId, now, leaseMs, epochs) => {
    const claimed: ClaimedTask[] = [];
    for (let i = 0; i < ids.length; i++) {
      const r = epochs === undefined
        ? (stmt.get(workerId, now, now + leaseMs, now, ids[i]) as TaskRow | undefined)
        : claimFenced(ids, i, workerId, now, leaseMs, epochs);
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
        ...(r.traceparent ? { traceparent: r.traceparent } : {}),
        ...(r.workflow_id ? { upstreamResults: upstreamResultsOf(r.id) } : {}),
      });
    }
    return claimed;
  };
}
