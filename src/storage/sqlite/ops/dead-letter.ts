/**
 * Dead-letter operations.
 * replayDead — inputs: id, now. DEAD → PENDING (compare-and-set on DEAD), due now, retry budget
 * restarted after the attempts made so far (retry_base = attempts), completion fields cleared; the
 * last error stays until the next attempt ends. Output: the due entry for the partition owner, or
 * null. Guarantee: one replay per DEAD state; the dead attempt is archived into the history first.
 * A workflow task's descendants that its death cancelled come back to BLOCKED, and its workflow
 * to RUNNING, in the same savepoint (workflow-progress.ts).
 * deleteDead — inputs: id. Deletes a DEAD task, its attempt history and its attempts' log lines.
 * Output: whether it did.
 */
import type Database from 'better-sqlite3';
import { DueEntry } from '../../../domain/task';
import { DUE_COLUMNS, dueEntryFromRow, TaskRow } from '../../sql/row-mapping';
import { prepareWorkflowProgress } from './workflow-progress';
import { TRANSITIONS } from '../../../domain/state-machine';
import { sqlState, sqlStates } from '../../sql/state-sql';

export function prepareReplayDead(db: Database.Database): (id: string, now: number) => DueEntry | null {
  // The final attempt of a finished task lives in the task row (see complete-attempts.ts): archive
  // it into the history before the row starts a new cycle.
  const archive = db.prepare(`
    INSERT OR IGNORE INTO attempts (task_id, attempt, worker_id, started_at, ended_at, outcome, error)
    SELECT id, attempts, worker_id, COALESCE(started_at, completed_at, @now), COALESCE(completed_at, @now), state, error
    FROM tasks WHERE id = @id AND ${sqlStates(TRANSITIONS.replay.from)} AND attempts > 0`);
  const stmt = db.prepare(`
    UPDATE tasks SET state = ${sqlState(TRANSITIONS.replay.to)}, due_at = @now, retry_base = attempts, completed_at = NULL,
      result = NULL, updated_at = @now
    WHERE id = @id AND ${sqlStates(TRANSITIONS.replay.from)}
    RETURNING ${DUE_COLUMNS}, workflow_id`);
  const workflows = prepareWorkflowProgress(db);
  return (id, now) => {
    archive.run({ id, now });
    const row = stmt.get({ id, now }) as TaskRow | undefined;
    if (row?.workflow_id) workflows.replayed(id, row.workflow_id, now);
    return row ? dueEntryFromRow(row) : null;
  };
}

export function prepareDeleteDead(db: Database.Database): (id: string) => boolean {
  const task = db.prepare(`DELETE FROM tasks WHERE id = ? AND ${sqlStates([TRANSITIONS.exhaust.to])}`);
  const history = db.prepare(`DELETE FROM attempts WHERE task_id = ?`);
  const logs = db.prepare(`DELETE FROM attempt_logs WHERE task_id = ?`);
  return (id) => {
    if (task.run(id).changes === 0) return false;
    history.run(id);
    logs.run(id);
    return true;
  };
}
