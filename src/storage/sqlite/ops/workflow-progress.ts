/**
 * Workflow progress: not an operation of its own, but the steps that every operation ending (or
 * restarting) a workflow task runs inside its own savepoint — completeAttempts, cancelTask,
 * cancelWorkflow, replayDead — so a workflow is never seen half-updated (docs/DESIGN.md §8):
 * - succeeded: each direct downstream task still BLOCKED has its unmet count decremented; one that
 *   reaches 0 becomes PENDING (or SCHEDULED, due at its own later `scheduled_at`). Output: their
 *   due entries.
 * Every statement finds its rows by id or by edge (the unary `+` keeps SQLite from choosing the
 * state index instead, which would scan every BLOCKED task of every workflow on each completion).
 * - ended (FAILED, DEAD, CANCELLED): every non-terminal descendant becomes CANCELLED with error
 *   type `upstream_failed` naming the task that ended (one recursive statement; UNION visits a
 *   task once, so diamonds and wide fan-ins cost O(descendants + their edges)).
 * - closed: n tasks of the workflow became terminal; when none is left open the workflow gets its
 *   final status (`finalWorkflowStatus`) and `completed_at`, as a compare-and-set on RUNNING.
 * - replayed: a DEAD task went back to PENDING; descendants it had cancelled come back to BLOCKED
 *   with recomputed counts when all their other upstreams can still succeed, in topological order;
 *   the workflow is RUNNING again.
 */
import type Database from 'better-sqlite3';
import { descendantsOf } from '../../../domain/dag/descendants';
import { DueEntry, TaskState, TERMINAL_STATES } from '../../../domain/task';
import { finalWorkflowStatus, UPSTREAM_FAILED } from '../../../domain/workflow';
import { DUE_COLUMNS, dueEntryFromRow, TaskRow } from '../../sql/row-mapping';
import { TRANSITIONS, canTransition } from '../../../domain/state-machine';
import { sqlState, sqlStates } from '../../sql/state-sql';

export interface WorkflowProgress {
  /** Task `taskId` of `workflowId` became SUCCEEDED. @returns the tasks it released */
  succeeded(taskId: string, workflowId: string, now: number): DueEntry[];
  /** Task `taskId` (local id `workflowTaskId`) became FAILED, DEAD or CANCELLED. */
  ended(taskId: string, workflowId: string, workflowTaskId: string, state: TaskState, now: number): void;
  /** `n` more tasks of the workflow are terminal; settles its status when none is open. */
  closed(workflowId: string, n: number, now: number): void;
  /** DEAD task `taskId` of `workflowId` was replayed (it is PENDING now). */
  replayed(taskId: string, workflowId: string, now: number): void;
}

const DESCENDANTS = `
  WITH RECURSIVE d(id) AS (
    SELECT downstream_id FROM workflow_edges WHERE upstream_id = @id
    UNION
    SELECT e.downstream_id FROM workflow_edges e JOIN d ON e.upstream_id = d.id)`;

export function prepareWorkflowProgress(db: Database.Database): WorkflowProgress {
  const release = db.prepare(`
    UPDATE tasks SET
      unmet_deps = unmet_deps - 1,
      state  = CASE WHEN unmet_deps <= 1 THEN (CASE WHEN scheduled_at > @now THEN ${sqlState(TRANSITIONS.unblockLater.to)} ELSE ${sqlState(TRANSITIONS.unblock.to)} END) ELSE state END,
      due_at = CASE WHEN unmet_deps <= 1 THEN MAX(COALESCE(scheduled_at, @now), @now) ELSE due_at END,
      updated_at = @now
    WHERE id IN (SELECT downstream_id FROM workflow_edges WHERE upstream_id = @id) AND ${sqlStates(TRANSITIONS.unblock.from, '+state')}
    RETURNING ${DUE_COLUMNS}`);
  const cancelDescendants = db.prepare(`${DESCENDANTS}
    UPDATE tasks SET state = ${sqlState(TRANSITIONS.upstreamFailed.to)}, error = @error, completed_at = @now, updated_at = @now, lease_expires_at = NULL
    WHERE id IN (SELECT id FROM d) AND ${sqlStates(TRANSITIONS.upstreamFailed.from, '+state')}`);
  const close = db.prepare(`
    UPDATE workflows SET open_tasks = open_tasks - @n, updated_at = @now WHERE id = @wf
    RETURNING open_tasks, cancel_requested, status`);
  const outcomes = db.prepare(`
    SELECT COALESCE(SUM(state IN ('FAILED', 'DEAD')), 0) AS failed, COALESCE(SUM(state = 'CANCELLED'), 0) AS cancelled
    FROM tasks WHERE workflow_id = ?`);
  const settle = db.prepare(`
    UPDATE workflows SET status = @status, completed_at = @now, updated_at = @now WHERE id = @wf AND status = 'RUNNING'`);
  const reopen = db.prepare(`
    UPDATE workflows SET open_tasks = open_tasks + @n, status = 'RUNNING', completed_at = NULL, updated_at = @now WHERE id = @wf`);
  const nodeOf = db.prepare(`SELECT id, state, json_extract(error, '$.type') AS reason FROM tasks WHERE id = ?`);
  const upstreamsOf = db.prepare(`
    SELECT e.upstream_id AS id, u.state AS state FROM workflow_edges e LEFT JOIN tasks u ON u.id = e.upstream_id
    WHERE e.downstream_id = ?`);
  const downstreamOf = db.prepare(`SELECT downstream_id FROM workflow_edges WHERE upstream_id = ?`).pluck();
  const reblock = db.prepare(`
    UPDATE tasks SET state = ${sqlState(TRANSITIONS.resume.to)}, unmet_deps = @unmet, error = NULL, completed_at = NULL, updated_at = @now
    WHERE id = @id AND ${sqlStates(TRANSITIONS.resume.from)}`);

  const progress: WorkflowProgress = {
    succeeded(taskId, workflowId, now) {
      const rows = release.all({ id: taskId, now }) as TaskRow[];
      progress.closed(workflowId, 1, now);
      return rows.filter((r) => !canTransition(r.state as TaskState, 'unblock')).map(dueEntryFromRow);
    },

    ended(taskId, workflowId, workflowTaskId, state, now) {
      const error = JSON.stringify({
        message: `upstream task "${workflowTaskId}" ended ${state}`,
        type: UPSTREAM_FAILED,
        retryable: false,
      });
      const n = cancelDescendants.run({ id: taskId, error, now }).changes;
      progress.closed(workflowId, 1 + n, now);
    },

    closed(workflowId, n, now) {
      if (n === 0) return;
      const wf = close.get({ wf: workflowId, n, now }) as { open_tasks: number; cancel_requested: number; status: string } | undefined;
      if (!wf || wf.open_tasks > 0 || wf.status !== 'RUNNING') return;
      const c = outcomes.get(workflowId) as { failed: number; cancelled: number };
      const status = finalWorkflowStatus({ failed: c.failed, cancelled: c.cancelled, cancelRequested: wf.cancel_requested === 1 });
      settle.run({ wf: workflowId, status, now });
    },

    replayed(taskId, workflowId, now) {
      const found = descendantsOf([taskId], (id) => downstreamOf.all(id) as string[])
        .map((id) => nodeOf.get(id) as { id: string; state: TaskState; reason: string | null } | undefined)
        .filter((d) => d !== undefined);
      const candidates = new Set(found.filter((d) => d.state === 'CANCELLED' && d.reason === UPSTREAM_FAILED).map((d) => d.id));
      // Kahn's algorithm over the candidates: a task is decided after all its candidate upstreams.
      const upstreams = new Map<string, Array<{ id: string; state: TaskState | null }>>();
      const waiting = new Map<string, number>();
      const queue: string[] = [];
      for (const id of candidates) {
        const ups = upstreamsOf.all(id) as Array<{ id: string; state: TaskState | null }>;
        upstreams.set(id, ups);
        const n = ups.filter((u) => candidates.has(u.id)).length;
        waiting.set(id, n);
        if (n === 0) queue.push(id);
      }
      const resumed = new Set<string>();
      for (let head = 0; head < queue.length; head++) {
        const id = queue[head];
        const ups = upstreams.get(id) ?? [];
        // Resumable when every upstream can still succeed: the replayed task, one resumed here,
        // one already SUCCEEDED, or one not yet terminal.
        const canRun = (u: { id: string; state: TaskState | null }) =>
          u.id === taskId || resumed.has(u.id) || (u.state !== null && (u.state === 'SUCCEEDED' || !TERMINAL_STATES.has(u.state)));
        if (ups.every(canRun)) {
          const unmet = ups.filter((u) => u.state !== 'SUCCEEDED' || u.id === taskId).length;
          if (reblock.run({ id, unmet, now }).changes === 1) resumed.add(id);
        }
        for (const next of downstreamOf.all(id) as string[]) {
          if (!candidates.has(next)) continue;
          const left = (waiting.get(next) ?? 1) - 1;
          waiting.set(next, left);
          if (left === 0) queue.push(next);
        }
      }
      reopen.run({ wf: workflowId, n: 1 + resumed.size, now });
    },
  };
  return progress;
}
