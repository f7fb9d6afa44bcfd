/**
 * completeAttempts — inputs: AttemptCompletion[] (decided by the retry policy, src/domain/
 * retry-policy.ts, before they reach the store), now (epoch ms).
 * For each: compare-and-set on (id, attempts = attempt, state RUNNING) → target state (a lease
 * sweep's completion, `leaseExpiredBefore`, first locks its row and checks that the lease still
 * ended before that instant: a heartbeat written since wins); a RETRYING
 * target becomes CANCELLED when a cancel was requested during the attempt; RETRYING gets
 * due_at = retryAt, and a retry whose backoff is already over (retryAt <= now) is due at once, so
 * RETRYING → PENDING happen in this same write (state PENDING). An attempt ending in a retry is
 * appended to `attempts` (run history); a final attempt stays described by the task row. A free
 * retry (`freeRetry`) also moves the budget on: retry_base + 1, so the attempt is not counted.
 * A workflow task's end is applied to its workflow in the same transaction (workflow-progress.ts):
 * SUCCEEDED releases downstream tasks whose last dependency it was (returned in `released`);
 * FAILED, DEAD or CANCELLED cancels its descendants (`upstream_failed`); the workflow's status
 * becomes final with its last task.
 * Output: CompletionResult per input, in input order, `applied: false` for stale or duplicate
 * completions (with the state as found); `entry` only when the task waits again (RETRYING or
 * PENDING), null for a final state. The statement returns the entry's columns only for the rows
 * that wait again (NULL for the others): most completions end their task, and a plain task's
 * success returned 11 values of which 3 are used (81.5 KB instead of 130 KB per 1,000 successes).
 * Guarantee: an attempt completes at most once, whichever node writes it (the database checks the
 * compare-and-set on the newest row version); a task never moves backwards.
 *
 * Statements per batch (the hot path): one that locks the workflow rows of the batch's tasks (in
 * id order, before any of their tasks: see workflow-progress.ts), left out when every completion
 * of the round says its task is in no workflow (`workflowId: null`, from its claimed row; see
 * "Plain rounds" below),
 * one that writes every completion, appends the retry history and reads the state of those not
 * applied (`UPDATE … FROM unnest(…)` with data-modifying CTEs); with workflow tasks, one release,
 * one cancel of descendants when some ended unsuccessfully, one count update of their workflows,
 * and two more when a workflow ends. A task named twice in a batch is written in a later round
 * (its second completion sees the first one's write, as if sent one after the other).
 *
 * Plain rounds: workflow membership is fixed when a task is created, so a completion whose claim
 * found `workflow_id` NULL needs no workflow lock and no workflow step. Such a round writes with
 * the extra condition `t.workflow_id IS NULL` in its compare-and-set, so a wrong hint cannot end a
 * workflow task without its workflow step: the refused row (not applied, RUNNING, in a workflow) is
 * completed again at once the full way (lock, write, progress). A batch of plain completions of
 * distinct tasks is one statement ({@link completionIsOneStatement}): the write queue may run it
 * without BEGIN/COMMIT (`inTransaction` false); the full-way rerun then opens its own transaction.
 *
 * Both writes are named prepared statements: parsed once per connection, still planned for each
 * call (`plan_cache_mode = force_custom_plan`, connection.ts); with I/O-bound tasks a batch holds a
 * few completions and parsing the 2 KB text was a large part of the backend's work
 * (docs/design-notes/postgres-store.md, decision 5).
 *
 * Plans (docs/design-notes/postgres-store.md): the compare-and-set is one `(…) IS TRUE` test and the
 * state of a completion not applied is read by id only for it (a subquery under CASE), so every row
 * is found through the id index; the store's connections plan with random_page_cost 1.1
 * (connection.ts). Written as plain conditions and a
 * LEFT JOIN, a burst of 20,000 RUNNING tasks without fresh statistics got a bitmap scan of every
 * RUNNING task hashed against the batch and a sequential scan of the whole table for the LEFT
 * JOIN: 41 ms for 500 completions, of which 28 ms in those two scans.
 */
import type { Db } from '../db';
import { DueEntry, TaskState } from '../../../domain/task';
import { AttemptCompletion, CompletionResult } from '../../store';
import { DUE_COLUMNS, dueEntryFromRow, qualified, TaskRow } from '../../sql/row-mapping';
import { TRANSITIONS } from '../../../domain/state-machine';
import { sqlState, sqlStates } from '../../sql/state-sql';
import { cancelDescendants, closeWorkflows, EndedWorkflowTask, lockWorkflowsOfTasks, releaseDownstream } from './workflow-progress';

/** The attempt being completed is still the task's current one, running. */
const RUNNING = sqlStates(TRANSITIONS.succeed.from, 't.state');
const RETRYING = sqlState(TRANSITIONS.retry.to);
/** A RETRYING target that stays a retry (no cancel was requested during the attempt). */
const RETRIES = `c.target = ${RETRYING} AND t.cancel_requested = 0`;
/** The task waits again after the write (its new state): only then does the caller need its due entry. */
const WAITS = sqlStates([TRANSITIONS.retry.to, TRANSITIONS.retryNow.to], 't.state');
/**
 * The due entry's columns that only a task waiting again needs (NULL otherwise, so a completion
 * ending its task returns these 8 as NULL, which the driver does not parse); `state` and
 * `task_type` are returned for every row.
 */
const ENTRY_COLUMNS = DUE_COLUMNS.split(',')
  .map((c) => c.trim())
  .filter((c) => c !== 'state' && c !== 'task_type');

/** The write of a round; `plain`: only tasks in no workflow are written (see "Plain rounds"). */
const completeSql = (plain: boolean): string => `
  WITH c AS (
    SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::float8[], $5::text[], $6::text[], $7::float8[], $8::int[])
      WITH ORDINALITY AS c(id, attempt, target, retry_at, result, error, duration_ms, free, ord)),
  u AS (
    UPDATE tasks t SET
      state = CASE WHEN c.target <> ${RETRYING} THEN c.target
                   WHEN t.cancel_requested = 1 THEN ${sqlState(TRANSITIONS.cancelRunning.to)}
                   WHEN c.retry_at <= $9 THEN ${sqlState(TRANSITIONS.retryNow.to)}
                   ELSE ${RETRYING} END,
      due_at       = CASE WHEN ${RETRIES} THEN c.retry_at ELSE t.due_at END,
      completed_at = CASE WHEN ${RETRIES} THEN NULL ELSE $9 END,
      retry_base   = CASE WHEN ${RETRIES} THEN t.retry_base + c.free ELSE t.retry_base END,
      duration_ms = c.duration_ms, result = c.result, error = c.error, lease_expires_at = NULL, updated_at = $9
    FROM c
    WHERE t.id = c.id AND (t.attempts = c.attempt AND ${RUNNING}${plain ? ' AND t.workflow_id IS NULL' : ''}) IS TRUE
    RETURNING c.ord, ${qualified(DUE_COLUMNS, 't')}, t.attempts, t.started_at, t.worker_id, t.workflow_id, t.workflow_task_id,
      (${RETRIES}) AS retried, (${WAITS}) AS waits),
  h AS (
    INSERT INTO attempts (task_id, attempt, worker_id, started_at, ended_at, outcome, error)
    SELECT u.id, u.attempts, u.worker_id, COALESCE(u.started_at, $9), $9, ${RETRYING}, c.error
    FROM u JOIN c ON c.ord = u.ord WHERE u.retried
    ON CONFLICT (task_id, attempt) DO NOTHING)
  SELECT u.ord IS NOT NULL AS applied, u.state, u.task_type, u.workflow_id, u.workflow_task_id,
    ${ENTRY_COLUMNS.map((col) => `CASE WHEN u.waits THEN u.${col} END AS ${col}`).join(', ')},
    CASE WHEN u.ord IS NULL THEN (SELECT f.state FROM tasks f WHERE f.id = c.id) END AS found_state,
    CASE WHEN u.ord IS NULL THEN (SELECT f.task_type FROM tasks f WHERE f.id = c.id) END AS found_type${
      plain
        ? `,
    CASE WHEN u.ord IS NULL THEN (SELECT f.workflow_id FROM tasks f WHERE f.id = c.id) END AS found_workflow`
        : ''
    }
  FROM c LEFT JOIN u ON u.ord = c.ord
  ORDER BY c.ord`;
const COMPLETE = completeSql(false);
const COMPLETE_PLAIN = completeSql(true);

/** A row of COMPLETE: the due entry's columns other than state and task_type are set only when the task waits again. */
type Row = TaskRow & {
  applied: boolean;
  workflow_id: string | null;
  workflow_task_id: string | null;
  found_state: TaskState | null;
  found_type: string | null;
  /** Plain rounds: the workflow of a task not written. */
  found_workflow?: string | null;
};

/**
 * True when `completeAttempts(completions)` is one statement: every completion says its task is
 * in no workflow (`workflowId: null`) and names a different task (one round).
 */
export function completionIsOneStatement(completions: readonly AttemptCompletion[]): boolean {
  const ids = new Set<string>();
  for (const c of completions) {
    if (c.workflowId !== null || c.leaseExpiredBefore !== undefined || ids.has(c.taskId)) return false;
    ids.add(c.taskId);
  }
  return completions.length > 0;
}

/**
 * Writes `completions` (see the file header). `inTransaction` false: the write queue runs this as a
 * bare statement (only when {@link completionIsOneStatement}); a rerun of refused rows then opens
 * its own transaction.
 */
export async function completeAttempts(
  db: Db,
  completions: AttemptCompletion[],
  now: number,
  inTransaction = true,
): Promise<CompletionResult[]> {
  const results = new Array<CompletionResult>(completions.length);
  const stale = await leasesRenewed(db, completions);
  for (const i of stale) results[i] = { taskId: completions[i].taskId, applied: false, state: null, entry: null, taskType: null };
  for (const round of rounds(completions.map((c, i) => (stale.has(i) ? null : c)))) {
    const out = await completeRound(
      db,
      round.map((i) => completions[i]),
      now,
      inTransaction,
    );
    round.forEach((i, k) => (results[i] = out[k]));
  }
  if (stale.size > 0) await fillStates(db, results, [...stale]);
  return results;
}

/**
 * The indexes of the lease sweep's completions (`leaseExpiredBefore`) whose attempt's lease no
 * longer ends before that instant (a heartbeat was written since the sweep read it), or that no
 * longer run. The others' rows are locked (`FOR UPDATE`, in id order) until the transaction
 * ends, so no heartbeat can slip in before their write. Only in a transaction (a completion with
 * `leaseExpiredBefore` is never a bare statement: {@link completionIsOneStatement}).
 */
async function leasesRenewed(db: Db, completions: AttemptCompletion[]): Promise<Set<number>> {
  const swept = completions.flatMap((c, i) => (c.leaseExpiredBefore !== undefined ? [i] : []));
  if (swept.length === 0) return new Set();
  const { rows } = await db.query<{ ord: string }>(
    `SELECT c.ord FROM unnest($1::text[], $2::int[], $3::float8[]) WITH ORDINALITY AS c(id, attempt, before, ord)
     JOIN tasks t ON t.id = c.id AND t.attempts = c.attempt AND ${RUNNING} AND t.lease_expires_at < c.before
     ORDER BY t.id FOR UPDATE OF t`,
    [
      swept.map((i) => completions[i].taskId),
      swept.map((i) => completions[i].attempt),
      swept.map((i) => completions[i].leaseExpiredBefore),
    ],
  );
  const expired = new Set(rows.map((r) => swept[Number(r.ord) - 1]));
  return new Set(swept.filter((i) => !expired.has(i)));
}

/** The current state and type of the tasks whose completions at `indexes` were not applied. */
async function fillStates(db: Db, results: CompletionResult[], indexes: number[]): Promise<void> {
  const { rows } = await db.query<{ id: string; state: TaskState; task_type: string }>(
    'SELECT id, state, task_type FROM tasks WHERE id = ANY($1::text[])',
    [indexes.map((i) => results[i].taskId)],
  );
  const found = new Map(rows.map((r) => [r.id, r]));
  for (const i of indexes) {
    const row = found.get(results[i].taskId);
    results[i] = { ...results[i], state: row?.state ?? null, taskType: row?.task_type ?? null };
  }
}

/** Indexes of `completions` in rounds: each task once per round, in input order (null: left out). */
function rounds(completions: Array<AttemptCompletion | null>): number[][] {
  const seen = new Map<string, number>();
  const out: number[][] = [];
  completions.forEach((c, i) => {
    if (c === null) return;
    const n = seen.get(c.taskId) ?? 0;
    seen.set(c.taskId, n + 1);
    (out[n] ??= []).push(i);
  });
  return out;
}

/** One round: every task at most once. */
async function completeRound(db: Db, round: AttemptCompletion[], now: number, inTransaction: boolean): Promise<CompletionResult[]> {
  const plain = round.every((c) => c.workflowId === null);
  if (!plain) {
    await lockWorkflowsOfTasks(
      db,
      round.map((c) => c.taskId),
    );
  }
  const { rows } = await db.query<Row>(
    plain ? COMPLETE_PLAIN : COMPLETE,
    [
      round.map((c) => c.taskId),
      round.map((c) => c.attempt),
      round.map((c) => c.state),
      round.map((c) => c.retryAt ?? now),
      round.map((c) => (c.state === 'SUCCEEDED' && c.result !== undefined ? JSON.stringify(c.result) : null)),
      round.map((c) => (c.error === null ? null : JSON.stringify(c.error))),
      round.map((c) => c.durationMs),
      round.map((c) => (c.freeRetry ? 1 : 0)),
      now,
    ],
    plain ? 'complete_plain' : 'complete',
  );
  const results = rows.map((r, k): CompletionResult => {
    const taskId = round[k].taskId;
    if (!r.applied) return { taskId, applied: false, state: r.found_state ?? null, entry: null, taskType: r.found_type ?? null };
    const state = r.state as TaskState;
    const waits = state === TRANSITIONS.retry.to || state === TRANSITIONS.retryNow.to;
    return { taskId, applied: true, state, entry: waits ? dueEntryFromRow(r) : null, taskType: r.task_type };
  });
  if (plain) {
    const refused = rows.flatMap((r, k) => (!r.applied && r.found_workflow && r.found_state === TRANSITIONS.succeed.from[0] ? [k] : []));
    if (refused.length > 0) await completeRefused(db, round, refused, results, now, inTransaction);
    return results;
  }
  const inWorkflow = rows.map((r, k) => ({ r, k })).filter(({ r }) => r.applied && r.workflow_id);
  if (inWorkflow.length > 0) await progress(db, inWorkflow, results, now);
  return results;
}

/**
 * A plain round refused the rows `refused` (indexes in `round`): their tasks are in a workflow
 * after all (a wrong hint). They are completed the full way, in this transaction or, after a bare
 * statement, in one of their own; their results replace the refusals in `results`.
 */
async function completeRefused(
  db: Db,
  round: AttemptCompletion[],
  refused: number[],
  results: CompletionResult[],
  now: number,
  inTransaction: boolean,
): Promise<void> {
  if (!inTransaction) await db.query('BEGIN');
  const out = await completeRound(
    db,
    refused.map((k) => ({ ...round[k], workflowId: undefined })),
    now,
    true,
  );
  if (!inTransaction) await db.query('COMMIT');
  refused.forEach((k, i) => (results[k] = out[i]));
}

/** The workflows of the applied completions `done` move on; released tasks go into `results`. */
async function progress(db: Db, done: Array<{ r: Row; k: number }>, results: CompletionResult[], now: number): Promise<void> {
  const closed = new Map<string, number>();
  const close = (wf: string, n: number) => closed.set(wf, (closed.get(wf) ?? 0) + n);
  const succeeded: Array<{ r: Row; k: number }> = [];
  const ended: EndedWorkflowTask[] = [];
  for (const d of done) {
    const state = d.r.state as TaskState;
    if (state === TRANSITIONS.retry.to || state === TRANSITIONS.retryNow.to) continue; // still open
    close(d.r.workflow_id as string, 1);
    if (state === TRANSITIONS.succeed.to) succeeded.push(d);
    else {
      const taskId = results[d.k].taskId;
      ended.push({ taskId, workflowTaskId: d.r.workflow_task_id ?? taskId, state });
    }
  }
  if (succeeded.length > 0) {
    const released = await releaseDownstream(
      db,
      succeeded.map((s) => results[s.k].taskId),
      now,
    );
    for (const s of succeeded) results[s.k].released = [];
    for (const { upstream, entry } of released) (results[succeeded[upstream].k].released as DueEntry[]).push(entry);
  }
  for (const [wf, n] of await cancelDescendants(db, ended, now)) close(wf, n);
  await closeWorkflows(db, closed, now);
}
