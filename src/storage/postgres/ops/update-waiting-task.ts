/**
 * updateWaitingTask — inputs: id, changes {scheduledAt (epoch ms, or null = now), priority rank,
 * payload}, now (epoch ms). Compare-and-set on a state where the task has not started its next
 * attempt (SCHEDULED, PENDING, RETRYING, BLOCKED, OVERFLOW). A new time sets scheduled_at and
 * due_at (the later of the time and now: a time already past is due now, see `buildNewTask`), and
 * the state follows it: later than now → SCHEDULED (transition `reschedule`), otherwise → PENDING
 * (`rescheduleNow`); BLOCKED stays BLOCKED, and OVERFLOW stays held (its release reads the new
 * `scheduled_at`). Output: the updated task (and its due entry), or the task as it is when the
 * state does not allow it, or not_found.
 * Guarantee: never touches a RUNNING or finished task: the state condition is checked on the
 * newest row version (a claim on another node that committed first wins).
 */
import type { Db } from '../db';
import { UpdateWaitingChanges, UpdateWaitingResult } from '../../store';
import { dueEntryFromRow, rankOfPriority, TaskRow, taskFromRow } from '../../sql/row-mapping';
import { TaskState } from '../../../domain/task';
import { GUARDS, TRANSITIONS, canTransition } from '../../../domain/state-machine';
import { sqlState, sqlStates } from '../../sql/state-sql';

const MOVES = `$3::boolean AND ${sqlStates(TRANSITIONS.reschedule.from)}`;

const UPDATE = `
  UPDATE tasks SET
    scheduled_at = CASE WHEN $3::boolean THEN $4::bigint ELSE scheduled_at END,
    due_at       = CASE WHEN ${MOVES} THEN $5::bigint ELSE due_at END,
    state        = CASE WHEN ${MOVES} THEN (CASE WHEN $5::bigint > $2::bigint THEN ${sqlState(TRANSITIONS.reschedule.to)} ELSE ${sqlState(TRANSITIONS.rescheduleNow.to)} END)
                        ELSE state END,
    priority     = COALESCE($6::int, priority),
    payload      = CASE WHEN $7::boolean THEN $8::text ELSE payload END,
    updated_at   = $2
  WHERE id = $1 AND ${sqlStates(GUARDS.edit)}
  RETURNING *`;

export async function updateWaitingTask(db: Db, id: string, changes: UpdateWaitingChanges, now: number): Promise<UpdateWaitingResult> {
  const row = (
    await db.query<TaskRow>(UPDATE, [
      id,
      now,
      changes.scheduledAt !== undefined,
      changes.scheduledAt ?? null,
      Math.max(changes.scheduledAt ?? now, now),
      changes.priority === undefined ? null : rankOfPriority(changes.priority),
      changes.payload !== undefined,
      changes.payload === undefined ? null : JSON.stringify(changes.payload),
    ])
  ).rows[0];
  if (row) {
    const entry = canTransition(row.state as TaskState, 'reschedule') ? dueEntryFromRow(row) : null;
    return { kind: 'updated', task: taskFromRow(row), entry };
  }
  const found = (await db.query<TaskRow>(`SELECT * FROM tasks WHERE id = $1`, [id])).rows[0];
  return found ? { kind: 'conflict', task: taskFromRow(found) } : { kind: 'not_found' };
}
