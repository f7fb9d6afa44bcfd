/**
 * completeAttempts — inputs: AttemptCompletion[] (decided by the retry policy), now.
 * For each: compare-and-set on (id, attempts = attempt, state RUNNING) → target state; a RETRYING
 * target becomes CANCELLED when a cancel was requested during the attempt; RETRYING gets
 * due_at = retryAt, and a retry whose backoff is already over (retryAt <= now) is due at once, so
 * RETRYING → PENDING happen in this same write (state PENDING). An attempt ending in a retry is
 * appended to `attempts` (run history); a final attempt stays described by the task row. A free
 * retry (`freeRetry`) also moves the budget on: retry_base + 1, so the attempt is not counted.
 * A workflow task's end is applied to its workflow in the same savepoint (workflow-progress.ts):
 * SUCCEEDED releases downstream tasks whose last dependency it was (returned in `released`);
 * FAILED, DEAD or CANCELLED cancels its descendants (`upstream_failed`); the workflow's status
 * becomes final with its last task.
 * An attempt claimed ahead (claimTasksAhead: no `started_at` yet) gets `started_at` from the
 * completion's `startedAt` (the instant it was sent to its worker); a row with a start keeps it.
 * Output: CompletionResult per input, `applied: false` for stale or duplicate completions; `entry`
 * only when the task waits again (RETRYING or PENDING), null for a final state.
 * A completion with `leaseExpiredBefore` (a lease sweep's) is applied only while the attempt's
 * lease still ends before it (checked in the same transaction), so a heartbeat written since the
 * sweep's read wins.
 * Guarantee: an attempt completes at most once; a task never moves backwards.
 *
 * A final target (SUCCEEDED, FAILED, DEAD, CANCELLED: no retry, so no cancel flag or backoff to
 * look at) has its own statements, a read of three columns as an array then the write by rowid,
 * cheaper than one statement for every target or an UPDATE … RETURNING. With the claim's `seq` as
 * a hint the read goes by rowid (id and attempt must still match; no row found that way: read
 * again by id). Figures: docs/design-notes/storage-measurements.md.
 */
import type Database from 'better-sqlite3';
import { TaskState } from '../../../domain/task';
import { AttemptCompletion, CompletionResult } from '../../store';
import { DUE_COLUMNS, dueEntryFromRow, TaskRow } from '../../sql/row-mapping';
import { prepareWorkflowProgress } from './workflow-progress';
import { TRANSITIONS } from '../../../domain/state-machine';
import { sqlState, sqlStates } from '../../sql/state-sql';

/** The attempt being completed is still the task's current one, running. */
const RUNNING = sqlStates(TRANSITIONS.succeed.from);

export function prepareCompleteAttempts(db: Database.Database): (completions: AttemptCompletion[], now: number) => CompletionResult[] {
  const retry = db.prepare(`
    UPDATE tasks SET
      state = CASE WHEN cancel_requested = 1 THEN ${sqlState(TRANSITIONS.cancelRunning.to)} WHEN @retryAt <= @now THEN ${sqlState(TRANSITIONS.retryNow.to)} ELSE ${sqlState(TRANSITIONS.retry.to)} END,
      due_at = CASE WHEN cancel_requested = 0 THEN @retryAt ELSE due_at END,
      completed_at = CASE WHEN cancel_requested = 0 THEN NULL ELSE @now END,
      retry_base = CASE WHEN cancel_requested = 0 THEN retry_base + @free ELSE retry_base END,
      duration_ms = @durationMs, result = NULL, error = @error, lease_expires_at = NULL, updated_at = @now,
      started_at = COALESCE(started_at, @startedAt)
    WHERE id = @id AND attempts = @attempt AND ${sqlStates(TRANSITIONS.retry.from)}
    RETURNING ${DUE_COLUMNS}, started_at, worker_id, workflow_id, workflow_task_id`);
  const workflows = prepareWorkflowProgress(db);
  const history = db.prepare(`
    INSERT OR IGNORE INTO attempts (task_id, attempt, worker_id, started_at, ended_at, outcome, error)
    VALUES (?, ?, ?, ?, ?, ?, ?)`);
  // A final target: the running attempt's row is read, then written by its rowid (both inside the
  // writer's one transaction, so nothing changes the row in between).
  const running = db
    .prepare(`SELECT seq, task_type, workflow_id, workflow_task_id FROM tasks WHERE id = ? AND attempts = ? AND ${RUNNING}`)
    .raw(true);
  const runningBySeq = db
    .prepare(`SELECT seq, task_type, workflow_id, workflow_task_id FROM tasks WHERE seq = ? AND id = ? AND attempts = ? AND ${RUNNING}`)
    .raw(true);
  const final = db.prepare(`
    UPDATE tasks SET state = ?, completed_at = ?, duration_ms = ?, result = ?, error = ?, lease_expires_at = NULL, updated_at = ?
    WHERE seq = ?`);
  // The same for an attempt claimed ahead, whose row has no start yet (the usual path keeps its statement).
  const finalStarted = db.prepare(`
    UPDATE tasks SET state = ?, completed_at = ?, duration_ms = ?, result = ?, error = ?, lease_expires_at = NULL, updated_at = ?,
      started_at = COALESCE(started_at, ?)
    WHERE seq = ?`);
  const current = db.prepare(`SELECT state, task_type FROM tasks WHERE id = ?`);
  const leaseEnded = db.prepare(`SELECT 1 FROM tasks WHERE id = ? AND attempts = ? AND ${RUNNING} AND lease_expires_at < ?`).pluck();
  const notApplied = (taskId: string): CompletionResult => {
    const found = current.get(taskId) as { state: TaskState; task_type: string } | undefined;
    return { taskId, applied: false, state: found?.state ?? null, entry: null, taskType: found?.task_type ?? null };
  };
  /** A final target: one compare-and-set, then the workflow's progress if the task is in one. */
  const toFinal = (c: AttemptCompletion, error: string | null, now: number): CompletionResult => {
    const result = c.state === 'SUCCEEDED' && c.result !== undefined ? JSON.stringify(c.result) : null;
    const row = ((c.seq !== undefined ? runningBySeq.get(c.seq, c.taskId, c.attempt) : undefined) ?? running.get(c.taskId, c.attempt)) as
      [number, string, string | null, string | null] | undefined;
    if (!row) return notApplied(c.taskId);
    const [seq, taskType, workflowId, workflowTaskId] = row;
    if (c.startedAt === undefined) final.run(c.state, now, c.durationMs, result, error, now, seq);
    else finalStarted.run(c.state, now, c.durationMs, result, error, now, c.startedAt, seq);
    const out: CompletionResult = { taskId: c.taskId, applied: true, state: c.state, entry: null, taskType };
    if (workflowId) {
      if (c.state === 'SUCCEEDED') out.released = workflows.succeeded(c.taskId, workflowId, now);
      else workflows.ended(c.taskId, workflowId, workflowTaskId ?? c.taskId, c.state, now);
    }
    return out;
  };
  return (completions, now) =>
    completions.map((c) => {
      if (c.leaseExpiredBefore !== undefined && leaseEnded.get(c.taskId, c.attempt, c.leaseExpiredBefore) === undefined) {
        return notApplied(c.taskId);
      }
      const error = c.error === null ? null : JSON.stringify(c.error);
      if (c.state !== 'RETRYING') return toFinal(c, error, now);
      const row = retry.get({
        id: c.taskId,
        attempt: c.attempt,
        retryAt: c.retryAt ?? now,
        now,
        durationMs: c.durationMs,
        error,
        free: c.freeRetry ? 1 : 0,
        startedAt: c.startedAt ?? null,
      }) as (TaskRow & { started_at: number; worker_id: string | null }) | undefined;
      if (!row) return notApplied(c.taskId);
      const state = row.state as TaskState;
      if (state === 'CANCELLED') {
        // A cancel was requested during the attempt: final, like any other cancel.
        if (row.workflow_id) workflows.ended(c.taskId, row.workflow_id, row.workflow_task_id ?? c.taskId, state, now);
        return { taskId: c.taskId, applied: true, state, entry: null, taskType: row.task_type };
      }
      // Run history: an attempt that ends in a retry gets its own row, since the next attempt
      // overwrites the task's run fields; a final attempt is described by the task row itself
      // (read back by getAttempts), which saves one insert per task on the common path.
      history.run(c.taskId, c.attempt, row.worker_id, row.started_at ?? now, now, 'RETRYING', error);
      return { taskId: c.taskId, applied: true, state, entry: dueEntryFromRow(row), taskType: row.task_type };
    });
}
