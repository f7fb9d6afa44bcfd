/**
 * claimTasks — inputs: ids, workerId, now, leaseMs. Transition `claim`: PENDING → RUNNING with
 * attempts + 1, worker_id, started_at = now, lease_expires_at = now + leaseMs, cancel flag cleared.
 * A SCHEDULED or RETRYING task already due (due_at <= now) is claimed the same way: transitions
 * `due` and `claim` in one write: the usual path of a due scheduled task or retry, whose due mark
 * is written only if it still waits at the dispatcher after `dueMarkDelayMs`. Output: ClaimedTask for each id whose compare-and-set won (others
 * are skipped: cancelled, already claimed, not yet due). A workflow task also gets its upstream tasks' results, keyed by their
 * workflow-local ids, and its submission's `traceparent`. Guarantee: one attempt number is handed out once.
 * With `epochs` (cluster mode, a fencing token per id): the compare-and-set also requires
 * owner_epoch <= epochs[i] and sets owner_epoch; a negative token never claims. Without it the
 * statement does not read owner_epoch (the embedded hot path is unchanged).
 */
import type Database from 'better-sqlite3';
import { ClaimedTask } from '../../../domain/task';
import { parseJson, RETRY_COLUMNS, retryFromRow } from '../row-mapping';

/** The columns a claim returns, in the order {@link claimedFromRow} reads them. */
const CLAIM_RETURNING = `id, attempts, task_type, payload, timeout_seconds, idempotency_key, due_at, partition, tenant_id,
  workflow_id, traceparent, ${RETRY_COLUMNS}`;

type ClaimRow = [string, number, string, string | null, number, string | null, number, number, string, string | null, string | null, ...unknown[]];

export function prepareClaimTasks(
  db: Database.Database,
): (ids: string[], workerId: string, now: number, leaseMs: number, epochs?: readonly number[]) => ClaimedTask[] {
  // Rows come back as arrays (`raw`): measured on 30,000 claims, 8 against 11 µs per claim with
  // row objects and spreads.
  const stmt = db
    .prepare(`
      UPDATE tasks SET state = 'RUNNING', attempts = attempts + 1, worker_id = ?, started_at = ?,
        lease_expires_at = ?, cancel_requested = 0, updated_at = ?
      WHERE id = ? AND (state = 'PENDING' OR (state IN ('SCHEDULED', 'RETRYING') AND due_at <= ?))
      RETURNING ${CLAIM_RETURNING}`)
    .raw(true);
  const fenced = db
    .prepare(`
      UPDATE tasks SET state = 'RUNNING', attempts = attempts + 1, worker_id = ?, started_at = ?,
        lease_expires_at = ?, cancel_requested = 0, updated_at = ?, owner_epoch = ?
      WHERE id = ? AND (state = 'PENDING' OR (state IN ('SCHEDULED', 'RETRYING') AND due_at <= ?)) AND owner_epoch <= ?
      RETURNING ${CLAIM_RETURNING}`)
    .raw(true);
  const upstream = db.prepare(`
    SELECT u.workflow_task_id AS key, u.result AS result FROM workflow_edges e JOIN tasks u ON u.id = e.upstream_id
    WHERE e.downstream_id = ?`);
  // fromEntries defines own properties: a local id such as "__proto__" stays a plain key.
  const upstreamResultsOf = (id: string): Record<string, unknown> =>
    Object.fromEntries((upstream.all(id) as Array<{ key: string; result: string | null }>).map((u) => [u.key, parseJson(u.result)]));
  /** The fenced claim of ids[i]: a negative (or missing) token never claims. */
  const claimFenced = (ids: string[], i: number, workerId: string, now: number, leaseMs: number, epochs: readonly number[]) => {
    const epoch = epochs[i] ?? -1;
    return epoch < 0 ? undefined : (fenced.get(workerId, now, now + leaseMs, now, epoch, ids[i], now, epoch) as ClaimRow | undefined);
  };
  /** The worker's view of a claimed row. */
  const claimedFromRow = (r: ClaimRow, now: number): ClaimedTask => {
    const task: ClaimedTask = {
      id: r[0],
      attempt: r[1],
      taskType: r[2],
      payload: parseJson(r[3]),
      timeoutSeconds: r[4],
      idempotencyKey: r[5],
      dueAt: r[6],
      retry: retryFromRow({
        max_retries: r[11] as number,
        retry_backoff: r[12] as string,
        retry_delay_seconds: r[13] as number,
        max_retry_delay_seconds: r[14] as number | null,
        retry_jitter: r[15] as number | null,
        retry_base: r[16] as number,
      }),
      partition: r[7],
      tenantId: r[8],
      startedAt: now,
    };
    if (r[10]) task.traceparent = r[10];
    if (r[9]) task.upstreamResults = upstreamResultsOf(r[0]);
    return task;
  };
  return (ids, workerId, now, leaseMs, epochs) => {
    const claimed: ClaimedTask[] = [];
    for (let i = 0; i < ids.length; i++) {
      const r = epochs === undefined
        ? (stmt.get(workerId, now, now + leaseMs, now, ids[i], now) as ClaimRow | undefined)
        : claimFenced(ids, i, workerId, now, leaseMs, epochs);
      if (r) claimed.push(claimedFromRow(r, now));
    }
    return claimed;
  };
}
