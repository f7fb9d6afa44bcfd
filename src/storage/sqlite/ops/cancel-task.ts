/**
 * cancelTask — inputs: id, now. Transition `cancel` (SCHEDULED/PENDING/RETRYING/BLOCKED/OVERFLOW →
 * CANCELLED) as a compare-and-set; a RUNNING task gets cancel_requested = 1 instead (its worker is
 * told to abort; the attempt's completion then decides CANCELLED or SUCCEEDED). Terminal → conflict.
 * Output: CancelResult with the task as it is after the write. Guarantee: atomic within the
 * group-commit savepoint; a cancelled task is never claimed afterwards (claim needs PENDING). A
 * cancelled workflow task cancels its descendants (`upstream_failed`) in the same savepoint.
 */
import type Database from 'better-sqlite3';
import { CancelResult } from '../../store';
import { TaskRow, taskFromRow } from '../../sql/row-mapping';
import { prepareWorkflowProgress } from './workflow-progress';
import { GUARDS, TRANSITIONS } from '../../../domain/state-machine';
import { sqlState, sqlStates } from '../../sql/state-sql';

export function prepareCancelTask(db: Database.Database): (id: string, now: number) => CancelResult {
  const cancelWaiting = db.prepare(`
    UPDATE tasks SET state = ${sqlState(TRANSITIONS.cancel.to)}, completed_at = ?, updated_at = ?
    WHERE id = ? AND ${sqlStates(TRANSITIONS.cancel.from)}
    RETURNING *`);
  const requestCancel = db.prepare(`
    UPDATE tasks SET cancel_requested = 1, updated_at = ?
    WHERE id = ? AND ${sqlStates(GUARDS.attempt)}
    RETURNING *`);
  const read = db.prepare(`SELECT * FROM tasks WHERE id = ?`);
  const workflows = prepareWorkflowProgress(db);
  return (id, now) => {
    const cancelled = cancelWaiting.get(now, now, id) as TaskRow | undefined;
    if (cancelled?.workflow_id) workflows.ended(id, cancelled.workflow_id, cancelled.workflow_task_id ?? id, TRANSITIONS.cancel.to, now);
    if (cancelled) return { kind: 'cancelled', task: taskFromRow(cancelled) };
    const running = requestCancel.get(now, id) as TaskRow | undefined;
    if (running) return { kind: 'cancelling', task: taskFromRow(running) };
    const row = read.get(id) as TaskRow | undefined;
    return row ? { kind: 'conflict', task: taskFromRow(row) } : { kind: 'not_found' };
  };
}
