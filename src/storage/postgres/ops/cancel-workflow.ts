/**
 * cancelWorkflow — inputs: workflow id, now (epoch ms). Compare-and-set on status RUNNING (which
 * locks the workflow row first: lock order workflow → tasks, see workflow-progress.ts): sets
 * cancel_requested, cancels every task of the workflow not yet started (SCHEDULED, PENDING,
 * RETRYING, BLOCKED → CANCELLED, error type `workflow_cancelled`), and sets cancel_requested on
 * its RUNNING tasks (their completion then decides CANCELLED, or SUCCEEDED if they finished first)
 * — one statement for both. The workflow is CANCELLED at once when nothing was running, else when
 * its last task ends.
 * Output: the workflow as it is after the write and the running attempts to abort (in submission
 * order); or conflict (already finished) / not_found.
 * Guarantee: one transaction; a task cancelled here is never claimed (a claim on another node
 * either committed first, and the task is returned as running, or finds it CANCELLED).
 */
import type { Db } from '../db';
import { WORKFLOW_CANCELLED } from '../../../domain/workflow';
import { WorkflowCancelResult } from '../../store';
import { WorkflowRow, workflowFromRow } from '../../sql/workflow-rows';
import { closeWorkflows } from './workflow-progress';
import { GUARDS, TRANSITIONS } from '../../../domain/state-machine';
import { sqlState, sqlStates } from '../../sql/state-sql';

const WAITING = sqlStates(TRANSITIONS.cancelWorkflow.from);
const RUNNING = sqlStates(GUARDS.attempt);

const CANCEL_TASKS = `
  UPDATE tasks SET
    state = CASE WHEN ${WAITING} THEN ${sqlState(TRANSITIONS.cancelWorkflow.to)} ELSE state END,
    error = CASE WHEN ${WAITING} THEN $3 ELSE error END,
    completed_at = CASE WHEN ${WAITING} THEN $2 ELSE completed_at END,
    cancel_requested = CASE WHEN ${RUNNING} THEN 1 ELSE cancel_requested END,
    updated_at = $2
  WHERE workflow_id = $1 AND (${WAITING} OR ${RUNNING})
  RETURNING id, seq, attempts, (${RUNNING}) AS running`;

const ERROR = JSON.stringify({ message: 'the workflow was cancelled', type: WORKFLOW_CANCELLED, retryable: false });

export async function cancelWorkflow(db: Db, id: string, now: number): Promise<WorkflowCancelResult> {
  const marked = await db.query(
    `UPDATE workflows SET cancel_requested = 1, updated_at = $2 WHERE id = $1 AND status = 'RUNNING' RETURNING id`,
    [id, now],
  );
  if (marked.rowCount === 0) {
    const row = (await db.query<WorkflowRow>(`SELECT * FROM workflows WHERE id = $1`, [id])).rows[0];
    return row ? { kind: 'conflict', workflow: workflowFromRow(row) } : { kind: 'not_found' };
  }
  const { rows } = await db.query<{ id: string; seq: number; attempts: number; running: boolean }>(CANCEL_TASKS, [id, now, ERROR]);
  const running = rows
    .filter((r) => r.running)
    .sort((a, b) => a.seq - b.seq)
    .map((r) => ({ taskId: r.id, attempt: r.attempts }));
  await closeWorkflows(db, new Map([[id, rows.length - running.length]]), now);
  const row = (await db.query<WorkflowRow>(`SELECT * FROM workflows WHERE id = $1`, [id])).rows[0];
  return { kind: 'cancelled', workflow: workflowFromRow(row), running };
}
