/**
 * cancelTask — inputs: id, now (epoch ms). Transition `cancel` (SCHEDULED/PENDING/RETRYING/BLOCKED/
 * OVERFLOW → CANCELLED) as a compare-and-set; a RUNNING task gets cancel_requested = 1 instead (its
 * worker is told to abort; the attempt's completion then decides CANCELLED or SUCCEEDED).
 * Terminal → conflict. Output: CancelResult with the task as it is after the write.
 * Guarantee: one transaction; a cancelled task is never claimed afterwards (claim needs PENDING,
 * and the compare-and-set is checked on the newest row version whichever node wrote it last). A
 * cancelled workflow task cancels its descendants (`upstream_failed`) and counts in its workflow in
 * the same transaction; the workflow row is locked first (lock order workflow → tasks, see
 * workflow-progress.ts).
 */
import type { Db } from '../db';
import { CancelResult } from '../../store';
import { TaskRow, taskFromRow } from '../../sql/row-mapping';
import { cancelDescendants, closeWorkflows, lockWorkflowsOfTasks } from './workflow-progress';
import { GUARDS, TRANSITIONS } from '../../../domain/state-machine';
import { sqlState, sqlStates } from '../../sql/state-sql';

const CANCEL_WAITING = `
  UPDATE tasks SET state = ${sqlState(TRANSITIONS.cancel.to)}, completed_at = $2, updated_at = $2
  WHERE id = $1 AND ${sqlStates(TRANSITIONS.cancel.from)}
  RETURNING *`;
const REQUEST_CANCEL = `
  UPDATE tasks SET cancel_requested = 1, updated_at = $2
  WHERE id = $1 AND ${sqlStates(GUARDS.attempt)}
  RETURNING *`;

export async function cancelTask(db: Db, id: string, now: number): Promise<CancelResult> {
  await lockWorkflowsOfTasks(db, [id]);
  const cancelled = (await db.query<TaskRow>(CANCEL_WAITING, [id, now])).rows[0];
  if (cancelled) {
    if (cancelled.workflow_id) {
      const ended = { taskId: id, workflowTaskId: cancelled.workflow_task_id ?? id, state: TRANSITIONS.cancel.to };
      const n = (await cancelDescendants(db, [ended], now)).get(cancelled.workflow_id) ?? 0;
      await closeWorkflows(db, new Map([[cancelled.workflow_id, 1 + n]]), now);
    }
    return { kind: 'cancelled', task: taskFromRow(cancelled) };
  }
  const running = (await db.query<TaskRow>(REQUEST_CANCEL, [id, now])).rows[0];
  if (running) return { kind: 'cancelling', task: taskFromRow(running) };
  const row = (await db.query<TaskRow>(`SELECT * FROM tasks WHERE id = $1`, [id])).rows[0];
  return row ? { kind: 'conflict', task: taskFromRow(row) } : { kind: 'not_found' };
}
