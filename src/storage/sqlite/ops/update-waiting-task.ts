/**
 * updateWaitingTask — inputs: id, changes {scheduledAt (epoch ms, or null = now), priority rank,
 * payload}, now. Compare-and-set on a state where the task has not started its next attempt
 * (SCHEDULED, PENDING, RETRYING, BLOCKED, OVERFLOW). A new time sets scheduled_at and due_at (the
 * later of the time and now: a time already past is due now, see `buildNewTask`), and the state
 * follows it: later than now → SCHEDULED (transition `reschedule`), otherwise → PENDING (`due`);
 * BLOCKED stays BLOCKED, and OVERFLOW stays held (its release reads the new `scheduled_at`). Output: the updated task (and its due entry), or the task as it is when
 * the state does not allow it, or not_found. Guarantee: never touches a RUNNING or finished task.
 */
import type Database from 'better-sqlite3';
import { UpdateWaitingChanges, UpdateWaitingResult } from '../../store';
import { dueEntryFromRow, rankOfPriority, TaskRow, taskFromRow } from '../../sql/row-mapping';
import { TaskState } from '../../../domain/task';
import { GUARDS, TRANSITIONS, canTransition } from '../../../domain/state-machine';
import { sqlState, sqlStates } from '../../sql/state-sql';

export function prepareUpdateWaitingTask(
  db: Database.Database,
): (id: string, changes: UpdateWaitingChanges, now: number) => UpdateWaitingResult {
  const update = db.prepare(`
    UPDATE tasks SET
      scheduled_at = CASE WHEN @setTime THEN @scheduledAt ELSE scheduled_at END,
      due_at       = CASE WHEN @setTime AND ${sqlStates(TRANSITIONS.reschedule.from)} THEN @dueAt ELSE due_at END,
      state        = CASE WHEN @setTime AND ${sqlStates(TRANSITIONS.reschedule.from)} THEN (CASE WHEN @dueAt > @now THEN ${sqlState(TRANSITIONS.reschedule.to)} ELSE ${sqlState(TRANSITIONS.rescheduleNow.to)} END)
                          ELSE state END,
      priority     = COALESCE(@priority, priority),
      payload      = CASE WHEN @setPayload THEN @payload ELSE payload END,
      updated_at   = @now
    WHERE id = @id AND ${sqlStates(GUARDS.edit)}
    RETURNING *`);
  const read = db.prepare(`SELECT * FROM tasks WHERE id = ?`);
  return (id, changes, now) => {
    const setTime = changes.scheduledAt !== undefined;
    const row = update.get({
      id,
      now,
      setTime: setTime ? 1 : 0,
      scheduledAt: changes.scheduledAt ?? null,
      dueAt: Math.max(changes.scheduledAt ?? now, now),
      priority: changes.priority === undefined ? null : rankOfPriority(changes.priority),
      setPayload: changes.payload !== undefined ? 1 : 0,
      payload: changes.payload === undefined ? null : JSON.stringify(changes.payload),
    }) as TaskRow | undefined;
    if (row)
      return {
        kind: 'updated',
        task: taskFromRow(row),
        entry: canTransition(row.state as TaskState, 'reschedule') ? dueEntryFromRow(row) : null,
      };
    const found = read.get(id) as TaskRow | undefined;
    return found ? { kind: 'conflict', task: taskFromRow(found) } : { kind: 'not_found' };
  };
}
