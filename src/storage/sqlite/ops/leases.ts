/**
 * Attempt leases.
 * heartbeatAttempts — inputs: [{taskId, attempt}], until (epoch ms). Sets lease_expires_at = until
 * for each attempt still RUNNING (compare-and-set on id, attempt and state), reading its
 * cancel_requested flag in the same statement (RETURNING). Output: how many were extended, and
 * those of them whose cancel was requested. (`extendLeases` is its count.)
 * findExpiredLeases — inputs: now, limit. Output: RUNNING attempts whose lease ended before `now`
 * (their worker stopped heartbeating: process or node died, or a handler is stuck), with the retry
 * settings needed to decide their next state. Read-only.
 */
import type Database from 'better-sqlite3';
import { AttemptHeartbeat, OrphanedAttempt } from '../../store';
import { RETRY_COLUMNS, retryFromRow, TaskRow } from '../../sql/row-mapping';
import { GUARDS } from '../../../domain/state-machine';
import { sqlStates } from '../../sql/state-sql';

export function prepareHeartbeatAttempts(
  db: Database.Database,
): (items: Array<{ taskId: string; attempt: number }>, until: number) => AttemptHeartbeat {
  const stmt = db.prepare(
    `UPDATE tasks SET lease_expires_at = ? WHERE id = ? AND attempts = ? AND ${sqlStates(GUARDS.attempt)} RETURNING cancel_requested`,
  );
  return (items, until) => {
    const answer: AttemptHeartbeat = { extended: 0, cancelRequested: [] };
    for (const i of items) {
      const row = stmt.get(until, i.taskId, i.attempt) as { cancel_requested: number } | undefined;
      if (!row) continue;
      answer.extended++;
      if (row.cancel_requested === 1) answer.cancelRequested.push({ taskId: i.taskId, attempt: i.attempt });
    }
    return answer;
  };
}

export function prepareFindExpiredLeases(db: Database.Database): (now: number, limit: number) => OrphanedAttempt[] {
  const stmt = db.prepare(`
    SELECT id, attempts, ${RETRY_COLUMNS}, worker_id FROM tasks
    WHERE state = 'RUNNING' AND lease_expires_at < ? ORDER BY seq LIMIT ?`);
  return (now, limit) =>
    (stmt.all(now, limit) as TaskRow[]).map((r) => ({ taskId: r.id, attempt: r.attempts, workerId: r.worker_id, retry: retryFromRow(r) }));
}
