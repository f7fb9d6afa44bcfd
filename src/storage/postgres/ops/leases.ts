/**
 * Attempt leases.
 * heartbeatAttempts — inputs: [{taskId, attempt}], until (epoch ms). Sets lease_expires_at = until
 * for each attempt still RUNNING (compare-and-set on id, attempt and state), reading its
 * cancel_requested flag in the same statement (RETURNING). One statement per 128 attempts, sorted
 * (rows locked in id order); the conditions on the row are one `(…) IS TRUE` test, so the rows
 * are found through the id index (see claim-tasks.ts). Output: how many were extended, and those
 * of them whose cancel was requested.
 * findExpiredLeases — inputs: now, limit. Output: RUNNING attempts whose lease ended before `now`
 * (oldest seq first, at most `limit`), with the retry settings needed to decide their next state.
 * Read-only, one statement on the pool (index `tasks_running_lease`).
 */
import type { Db } from '../db';
import type { AttemptHeartbeat, OrphanedAttempt } from '../../store';
import { RETRY_COLUMNS, retryFromRow, TaskRow } from '../../sql/row-mapping';
import { GUARDS } from '../../../domain/state-machine';
import { sqlState, sqlStates } from '../../sql/state-sql';

/** Most attempts per statement (see claim-tasks.ts: larger lists made the planner scan the table). */
const CHUNK = 128;

const HEARTBEAT = `
  UPDATE tasks t SET lease_expires_at = $1
  FROM unnest($2::text[], $3::int[]) AS w(id, attempt)
  WHERE t.id = w.id AND (t.attempts = w.attempt AND ${sqlStates(GUARDS.attempt, 't.state')}) IS TRUE
  RETURNING t.id, t.attempts, t.cancel_requested`;

const EXPIRED = `
  SELECT id, attempts, ${RETRY_COLUMNS}, worker_id FROM tasks
  WHERE state = ${sqlState('RUNNING')} AND lease_expires_at < $1 ORDER BY seq LIMIT $2`;

/** Extends the leases of the attempts still running (see the file header). */
export async function heartbeatAttempts(
  db: Db,
  items: Array<{ taskId: string; attempt: number }>,
  until: number,
): Promise<AttemptHeartbeat> {
  const answer: AttemptHeartbeat = { extended: 0, cancelRequested: [] };
  if (items.length === 0) return answer;
  const sorted = [...items].sort((a, b) => (a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : a.attempt - b.attempt));
  const rows: Array<{ id: string; attempts: number; cancel_requested: number }> = [];
  for (let from = 0; from < sorted.length; from += CHUNK) {
    const chunk = sorted.slice(from, from + CHUNK);
    const answer = await db.query<{ id: string; attempts: number; cancel_requested: number }>(HEARTBEAT, [
      until,
      chunk.map((i) => i.taskId),
      chunk.map((i) => i.attempt),
    ]);
    rows.push(...answer.rows);
  }
  const extended = new Map(rows.map((r) => [`${r.attempts}:${r.id}`, r.cancel_requested === 1]));
  for (const i of items) {
    const cancel = extended.get(`${i.attempt}:${i.taskId}`);
    if (cancel === undefined) continue;
    answer.extended++;
    if (cancel) answer.cancelRequested.push({ taskId: i.taskId, attempt: i.attempt });
  }
  return answer;
}

/** RUNNING attempts whose lease ended before `now`. */
export async function findExpiredLeases(db: Db, now: number, limit: number): Promise<OrphanedAttempt[]> {
  const { rows } = await db.query<TaskRow>(EXPIRED, [now, limit]);
  return rows.map((r) => ({ taskId: r.id, attempt: r.attempts, workerId: r.worker_id, retry: retryFromRow(r) }));
}
