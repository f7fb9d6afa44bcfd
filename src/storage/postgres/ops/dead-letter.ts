/**
 * Dead-letter operations.
 * replayDead — inputs: id, now (epoch ms). DEAD → PENDING (compare-and-set on DEAD), due now, retry
 * budget restarted after the attempts made so far (retry_base = attempts), completion fields
 * cleared; the last error stays until the next attempt ends. Output: the due entry for the
 * partition owner, or null.
 * Guarantee: one replay per DEAD state, whichever node runs it (a second replay waits for the
 * first one's row lock and then finds the task PENDING); the dead attempt is archived into the
 * history in the same statement. A workflow task's descendants that its death cancelled come back
 * to BLOCKED, and its workflow to RUNNING, in the same transaction (workflow-progress.ts; the
 * workflow row is locked first).
 * deleteDead — inputs: id. Deletes a DEAD task, its attempt history and its attempts' log lines
 * (one statement). Output: whether it did.
 */
import type { Db } from '../db';
import { DueEntry } from '../../../domain/task';
import { DUE_COLUMNS, dueEntryFromRow, TaskRow } from '../../sql/row-mapping';
import { lockWorkflowsOfTasks, resumeAfterReplay } from './workflow-progress';
import { TRANSITIONS } from '../../../domain/state-machine';
import { sqlState, sqlStates } from '../../sql/state-sql';

// The final attempt of a finished task lives in the task row (see complete-attempts.ts): it is
// archived into the history before the row starts a new cycle (the CTE reads the row as it was).
const REPLAY = `
  WITH archived AS (
    INSERT INTO attempts (task_id, attempt, worker_id, started_at, ended_at, outcome, error)
    SELECT id, attempts, worker_id, COALESCE(started_at, completed_at, $2), COALESCE(completed_at, $2), state, error
    FROM tasks WHERE id = $1 AND ${sqlStates(TRANSITIONS.replay.from)} AND attempts > 0
    ON CONFLICT (task_id, attempt) DO NOTHING)
  UPDATE tasks SET state = ${sqlState(TRANSITIONS.replay.to)}, due_at = $2, retry_base = attempts, completed_at = NULL,
    result = NULL, updated_at = $2
  WHERE id = $1 AND ${sqlStates(TRANSITIONS.replay.from)}
  RETURNING ${DUE_COLUMNS}, workflow_id`;

export async function replayDead(db: Db, id: string, now: number): Promise<DueEntry | null> {
  await lockWorkflowsOfTasks(db, [id]);
  const row = (await db.query<TaskRow>(REPLAY, [id, now])).rows[0];
  if (!row) return null;
  if (row.workflow_id) await resumeAfterReplay(db, id, row.workflow_id, now);
  return dueEntryFromRow(row);
}

const DELETE = `
  WITH task AS (DELETE FROM tasks WHERE id = $1 AND ${sqlStates([TRANSITIONS.exhaust.to])} RETURNING id),
  history AS (DELETE FROM attempts WHERE task_id IN (SELECT id FROM task)),
  logs AS (DELETE FROM attempt_logs WHERE task_id IN (SELECT id FROM task))
  SELECT count(*)::int AS n FROM task`;

export async function deleteDead(db: Db, id: string): Promise<boolean> {
  const { rows } = await db.query<{ n: number }>(DELETE, [id]);
  return (rows[0]?.n ?? 0) > 0;
}
