/**
 * completeAttempts — inputs: AttemptCompletion[] (decided by the retry policy), now.
 * For each: compare-and-set on (id, attempts = attempt, state RUNNING) → target state; a RETRYING
 * target becomes CANCELLED when a cancel was requested during the attempt; RETRYING gets
 * due_at = retryAt, and a retry whose backoff is already over (retryAt <= now) is due at once, so
 * RETRYING → PENDING happen in this same write (state PENDING). An attempt ending in a retry is
 * appended to `attempts` (run history); a final attempt stays described by the task row.
 * A workflow task's end is applied to its workflow in the same savepoint (workflow-progress.ts):
 * SUCCEEDED releases downstream tasks whose last dependency it was (returned in `released`);
 * FAILED, DEAD or CANCELLED cancels its descendants (`upstream_failed`); the workflow's status
 * becomes final with its last task.
 * Output: CompletionResult per input, `applied: false` for stale or duplicate completions.
 * Guarantee: an attempt completes at most once; a task never moves backwards.
 */
import type Database from 'better-sqlite3';
import { TaskState, TERMINAL_STATES } from '../../../domain/task';
import { AttemptCompletion, CompletionResult } from '../../store';
import { DUE_COLUMNS, dueEntryFromRow, TaskRow } from '../row-mapping';
import { prepareWorkflowProgress } from './workflow-progress';

export function prepareCompleteAttempts(
  db: Database.Database,
): (completions: AttemptCompletion[], now: number) => CompletionResult[] {
  const update = db.prepare(`
    UPDATE tasks SET
      state = CASE
        WHEN @state = 'RETRYING' AND cancel_requested = 1 THEN 'CANCELLED'
        WHEN @state = 'RETRYING' AND @retryAt <= @now THEN 'PENDING'
        ELSE @state END,
      due_at = CASE WHEN @state = 'RETRYING' AND cancel_requested = 0 THEN @retryAt ELSE due_at END,
      completed_at = CASE WHEN @state = 'RETRYING' AND cancel_requested = 0 THEN NULL ELSE @now END,
      duration_ms = @durationMs, result = @result, error = @error, lease_expires_at = NULL, updated_at = @now
    WHERE id = @id AND attempts = @attempt AND state = 'RUNNING'
    RETURNING ${DUE_COLUMNS}, started_at, worker_id, workflow_id, workflow_task_id`);
  const workflows = prepareWorkflowProgress(db);
  const history = db.prepare(`
    INSERT OR IGNORE INTO attempts (task_id, attempt, worker_id, started_at, ended_at, outcome, error)
    VALUES (?, ?, ?, ?, ?, ?, ?)`);
  const current = db.prepare(`SELECT state, task_type FROM tasks WHERE id = ?`);
  return (completions, now) =>
    completions.map((c) => {
      const error = c.error === null ? null : JSON.stringify(c.error);
      const row = update.get({
        id: c.taskId,
        attempt: c.attempt,
        state: c.state,
        retryAt: c.retryAt ?? now,
        now,
        durationMs: c.durationMs,
        result: c.state === 'SUCCEEDED' && c.result !== undefined ? JSON.stringify(c.result) : null,
        error,
      }) as (TaskRow & { started_at: number; worker_id: string | null }) | undefined;
      if (!row) {
        const found = current.get(c.taskId) as { state: TaskState; task_type: string } | undefined;
        return { taskId: c.taskId, applied: false, state: found?.state ?? null, entry: null, taskType: found?.task_type ?? null };
      }
      // Run history: an attempt that ends in a retry gets its own row, since the next attempt
      // overwrites the task's run fields; a final attempt is described by the task row itself
      // (read back by getAttempts), which saves one insert per task on the common path.
      if (row.state === 'RETRYING' || row.state === 'PENDING') {
        history.run(c.taskId, c.attempt, row.worker_id, row.started_at ?? now, now, 'RETRYING', error);
      }
      const state = row.state as TaskState;
      const result: CompletionResult = { taskId: c.taskId, applied: true, state, entry: dueEntryFromRow(row), taskType: row.task_type };
      if (row.workflow_id && TERMINAL_STATES.has(state)) {
        if (state === 'SUCCEEDED') result.released = workflows.succeeded(c.taskId, row.workflow_id, now);
        else workflows.ended(c.taskId, row.workflow_id, row.workflow_task_id ?? c.taskId, state, now);
      }
      return result;
    });
}
