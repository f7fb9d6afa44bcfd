/**
 * cancelWorkflow — inputs: workflow id, now. Compare-and-set on status RUNNING: sets
 * cancel_requested, cancels every task of the workflow not yet started (SCHEDULED, PENDING,
 * RETRYING, BLOCKED → CANCELLED, error type `workflow_cancelled`), and sets cancel_requested on
 * its RUNNING tasks (their completion then decides CANCELLED, or SUCCEEDED if they finished first).
 * The workflow is CANCELLED at once when nothing was running, else when its last task ends.
 * Output: the workflow as it is after the write and the running attempts to abort; or conflict
 * (already finished) / not_found. Guarantee: one savepoint; a task cancelled here is never claimed.
 */
import type Database from 'better-sqlite3';
import { WORKFLOW_CANCELLED } from '../../../domain/workflow';
import { WorkflowCancelResult } from '../../store';
import { WorkflowRow, workflowFromRow } from '../../sql/workflow-rows';
import { prepareWorkflowProgress } from './workflow-progress';
import { GUARDS, TRANSITIONS } from '../../../domain/state-machine';
import { sqlState, sqlStates } from '../../sql/state-sql';

export function prepareCancelWorkflow(db: Database.Database): (id: string, now: number) => WorkflowCancelResult {
  const read = db.prepare(`SELECT * FROM workflows WHERE id = ?`);
  const mark = db.prepare(`UPDATE workflows SET cancel_requested = 1, updated_at = @now WHERE id = @id AND status = 'RUNNING'`);
  const cancelWaiting = db.prepare(`
    UPDATE tasks SET state = ${sqlState(TRANSITIONS.cancelWorkflow.to)}, error = @error, completed_at = @now, updated_at = @now
    WHERE workflow_id = @id AND ${sqlStates(TRANSITIONS.cancelWorkflow.from, '+state')}`);
  const requestRunning = db.prepare(`
    UPDATE tasks SET cancel_requested = 1, updated_at = @now WHERE workflow_id = @id AND ${sqlStates(GUARDS.attempt, '+state')}
    RETURNING id, attempts`);
  const workflows = prepareWorkflowProgress(db);
  const error = JSON.stringify({ message: 'the workflow was cancelled', type: WORKFLOW_CANCELLED, retryable: false });
  return (id, now) => {
    if (mark.run({ id, now }).changes === 0) {
      const row = read.get(id) as WorkflowRow | undefined;
      return row ? { kind: 'conflict', workflow: workflowFromRow(row) } : { kind: 'not_found' };
    }
    const cancelled = cancelWaiting.run({ id, now, error }).changes;
    const running = (requestRunning.all({ id, now }) as Array<{ id: string; attempts: number }>).map((r) => ({
      taskId: r.id,
      attempt: r.attempts,
    }));
    workflows.closed(id, cancelled, now);
    return { kind: 'cancelled', workflow: workflowFromRow(read.get(id) as WorkflowRow), running };
  };
}
