/**
 * Workflow progress (PostgreSQL): not an operation of its own, but the steps every operation that
 * ends or restarts workflow tasks runs inside its own transaction — completeAttempts, cancelTask,
 * cancelWorkflow, replayDead — so a workflow is never seen half-updated (docs/DESIGN.md §8). The
 * SQLite model is src/storage/sqlite/ops/workflow-progress.ts; these steps are set-based (one
 * statement for a whole batch of ended tasks).
 *
 * CONCURRENCY (several nodes, READ COMMITTED): the caller locks the workflow rows first
 * ({@link lockWorkflowsOfTasks}, in id order) before it changes any task of them, so the workflow
 * steps of one workflow run one transaction at a time across nodes and rows are always locked in
 * the order workflow → its tasks (no deadlock between a completion and a cancel). Besides, every
 * write is still a compare-and-set the database checks: `unmet_deps = unmet_deps - k` and the
 * BLOCKED condition are re-evaluated on the newest row version, and the status is settled by a
 * statement that starts after the workflow row is locked (so it sees every task change committed
 * by the transactions that held that lock before).
 * - released: each direct downstream task still BLOCKED of the SUCCEEDED tasks has its unmet count
 *   decremented (by the number of them it depends on); one that reaches 0 becomes PENDING (or
 *   SCHEDULED, due at its own later `scheduled_at`). Output: their due entries, each with the
 *   index of the (last) upstream that released it.
 * - cancelled descendants (FAILED, DEAD, CANCELLED ends): every non-terminal descendant becomes
 *   CANCELLED with error type `upstream_failed` naming the (first) ended task it descends from; one
 *   recursive statement, UNION visits a (task, origin) pair once.
 * - closed: n tasks of a workflow became terminal; a workflow with none left open gets its final
 *   status (`finalWorkflowStatus`) and `completed_at`, as a compare-and-set on RUNNING.
 * - replayed: a DEAD task went back to PENDING; descendants it had cancelled come back to BLOCKED
 *   with recomputed counts when all their other upstreams can still succeed, in topological order;
 *   the workflow is RUNNING again.
 */
import type { Db } from '../db';
import { descendantsByLevel } from '../../../domain/dag/descendants';
import { DueEntry, TaskState, TERMINAL_STATES } from '../../../domain/task';
import { finalWorkflowStatus, UPSTREAM_FAILED } from '../../../domain/workflow';
import { DUE_COLUMNS, dueEntryFromRow, qualified, TaskRow } from '../../sql/row-mapping';
import { canTransition, TRANSITIONS } from '../../../domain/state-machine';
import { sqlState, sqlStates } from '../../sql/state-sql';

/** A workflow task that just ended FAILED, DEAD or CANCELLED. */
export interface EndedWorkflowTask {
  taskId: string;
  workflowTaskId: string;
  state: TaskState;
}

/**
 * The lock key of workflow `id` itself, beside task ids in a group commit's declared locks
 * (`lockWorkflowsFirst`); NUL cannot be in an id PostgreSQL stores, so no task id looks like one.
 */
export function workflowLockKey(id: string): string {
  return `\u0000workflow:${id}`;
}

/**
 * The group commit's declared locks (`WriteQueueOptions.lockFirst`): every workflow row that
 * `keys` name, a task id naming its task's workflow (if any) and {@link workflowLockKey} a workflow
 * itself, locked FOR UPDATE in id order in one statement. A batch that both completes tasks of
 * workflows and cancels another workflow then takes all of them in one order, as every other
 * node's batch does, instead of locking the cancelled one after the others (a deadlock, which
 * PostgreSQL breaks after its `deadlock_timeout`).
 * @returns the locked workflow ids
 */
export async function lockWorkflowsFirst(db: Db, keys: readonly string[]): Promise<string[]> {
  const prefix = workflowLockKey('');
  const workflowIds = keys.filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length));
  if (workflowIds.length === 0) return lockWorkflowsOfTasks(db, keys);
  const taskIds = keys.filter((k) => !k.startsWith(prefix));
  const { rows } = await db.query<{ id: string }>(
    `SELECT w.id FROM workflows w
     WHERE w.id IN (SELECT unnest($2::text[])
                    UNION ALL
                    SELECT t.workflow_id FROM unnest($1::text[]) AS u(id) JOIN tasks t ON t.id = u.id WHERE t.workflow_id IS NOT NULL)
     ORDER BY w.id FOR UPDATE OF w`,
    [taskIds, workflowIds],
  );
  return rows.map((r) => r.id);
}

/**
 * Locks (FOR UPDATE, in id order) the workflow rows of the tasks `taskIds` that belong to one.
 * Call it before changing those tasks: the lock order is then always workflow → tasks.
 * @returns the locked workflow ids
 */
export async function lockWorkflowsOfTasks(db: Db, taskIds: readonly string[]): Promise<string[]> {
  if (taskIds.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(
    `SELECT w.id FROM workflows w
     WHERE w.id IN (SELECT t.workflow_id FROM unnest($1::text[]) AS u(id) JOIN tasks t ON t.id = u.id WHERE t.workflow_id IS NOT NULL)
     ORDER BY w.id FOR UPDATE OF w`,
    [taskIds],
  );
  return rows.map((r) => r.id);
}

/**
 * The SUCCEEDED tasks `upstreamIds` release their BLOCKED downstream tasks (one statement).
 * @returns the released tasks' due entries, each with the index in `upstreamIds` of the last
 *   upstream among them it depends on
 */
export async function releaseDownstream(
  db: Db,
  upstreamIds: readonly string[],
  now: number,
): Promise<Array<{ upstream: number; entry: DueEntry }>> {
  if (upstreamIds.length === 0) return [];
  const ready = `t.unmet_deps <= e.k`;
  const { rows } = await db.query<TaskRow & { upstream: number }>(
    `WITH e AS (
       SELECT w.downstream_id AS id, count(*)::int AS k, max(s.ord)::int AS upstream
       FROM unnest($1::text[]) WITH ORDINALITY AS s(id, ord) JOIN workflow_edges w ON w.upstream_id = s.id
       GROUP BY w.downstream_id)
     UPDATE tasks t SET
       unmet_deps = t.unmet_deps - e.k,
       state  = CASE WHEN ${ready} THEN (CASE WHEN t.scheduled_at > $2 THEN ${sqlState(TRANSITIONS.unblockLater.to)} ELSE ${sqlState(TRANSITIONS.unblock.to)} END) ELSE t.state END,
       due_at = CASE WHEN ${ready} THEN GREATEST(COALESCE(t.scheduled_at, $2), $2) ELSE t.due_at END,
       updated_at = $2
     FROM e
     WHERE t.id = e.id AND ${sqlStates(TRANSITIONS.unblock.from, 't.state')}
     RETURNING ${qualified(DUE_COLUMNS, 't')}, e.upstream - 1 AS upstream`,
    [upstreamIds, now],
  );
  return rows
    .filter((r) => !canTransition(r.state as TaskState, 'unblock'))
    .sort((a, b) => a.seq - b.seq)
    .map((r) => ({ upstream: r.upstream, entry: dueEntryFromRow(r) }));
}

/**
 * Cancels (`upstream_failed`) every non-terminal descendant of the tasks `ended` (one statement).
 * @returns the number of tasks cancelled, per workflow id
 */
export async function cancelDescendants(db: Db, ended: readonly EndedWorkflowTask[], now: number): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  if (ended.length === 0) return counts;
  const errors = ended.map((e) =>
    JSON.stringify({ message: `upstream task "${e.workflowTaskId}" ended ${e.state}`, type: UPSTREAM_FAILED, retryable: false }),
  );
  const { rows } = await db.query<{ workflow_id: string; n: number }>(
    `WITH RECURSIVE s AS (SELECT * FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS s(id, error, ord)),
     d(id, ord) AS (
       SELECT e.downstream_id, s.ord FROM s JOIN workflow_edges e ON e.upstream_id = s.id
       UNION
       SELECT e.downstream_id, d.ord FROM d JOIN workflow_edges e ON e.upstream_id = d.id),
     pick AS (SELECT DISTINCT ON (d.id) d.id, s.error FROM d JOIN s ON s.ord = d.ord ORDER BY d.id, d.ord),
     c AS (
       UPDATE tasks t SET state = ${sqlState(TRANSITIONS.upstreamFailed.to)}, error = pick.error, completed_at = $3, updated_at = $3,
         lease_expires_at = NULL
       FROM pick WHERE t.id = pick.id AND ${sqlStates(TRANSITIONS.upstreamFailed.from, 't.state')}
       RETURNING t.workflow_id)
     SELECT workflow_id, count(*)::int AS n FROM c GROUP BY workflow_id`,
    [ended.map((e) => e.taskId), errors, now],
  );
  for (const r of rows) counts.set(r.workflow_id, r.n);
  return counts;
}

/**
 * `n` more tasks of each workflow are terminal (`closed`: workflow id → n); a workflow with none
 * left open, still RUNNING, gets its final status and `completed_at` = now.
 */
export async function closeWorkflows(db: Db, closed: ReadonlyMap<string, number>, now: number): Promise<void> {
  const ids = [...closed.keys()].filter((id) => (closed.get(id) ?? 0) > 0);
  if (ids.length === 0) return;
  const { rows } = await db.query<{ id: string; open_tasks: number; cancel_requested: number; status: string }>(
    `UPDATE workflows w SET open_tasks = w.open_tasks - x.n, updated_at = $3
     FROM unnest($1::text[], $2::int[]) AS x(id, n) WHERE w.id = x.id
     RETURNING w.id, w.open_tasks, w.cancel_requested, w.status`,
    [ids, ids.map((id) => closed.get(id)), now],
  );
  const done = rows.filter((w) => w.open_tasks <= 0 && w.status === 'RUNNING');
  if (done.length === 0) return;
  // A new statement, after the workflow rows were locked: it sees every task change committed by
  // the transactions that held those locks before this one.
  const outcomes = await db.query<{ workflow_id: string; failed: number; cancelled: number }>(
    `SELECT workflow_id, count(*) FILTER (WHERE state IN ('FAILED', 'DEAD'))::int AS failed,
       count(*) FILTER (WHERE state = 'CANCELLED')::int AS cancelled
     FROM tasks WHERE workflow_id = ANY($1::text[]) GROUP BY workflow_id`,
    [done.map((w) => w.id)],
  );
  const counts = new Map(outcomes.rows.map((r) => [r.workflow_id, r]));
  const statuses = done.map((w) => {
    const c = counts.get(w.id);
    return finalWorkflowStatus({ failed: c?.failed ?? 0, cancelled: c?.cancelled ?? 0, cancelRequested: w.cancel_requested === 1 });
  });
  await db.query(
    `UPDATE workflows w SET status = x.status, completed_at = $3, updated_at = $3
     FROM unnest($1::text[], $2::text[]) AS x(id, status) WHERE w.id = x.id AND w.status = 'RUNNING'`,
    [done.map((w) => w.id), statuses, now],
  );
}

/**
 * DEAD task `taskId` of workflow `workflowId` was replayed (it is PENDING now): the descendants it
 * cancelled that can run again go back to BLOCKED, and the workflow to RUNNING. The caller holds
 * the workflow row's lock.
 */
export async function resumeAfterReplay(db: Db, taskId: string, workflowId: string, now: number): Promise<void> {
  const downstream = new Map<string, string[]>();
  const found = await descendantsByLevel([taskId], async (frontier) => {
    const { rows } = await db.query<{ upstream_id: string; downstream_id: string }>(
      `SELECT upstream_id, downstream_id FROM workflow_edges WHERE upstream_id = ANY($1::text[]) ORDER BY upstream_id, downstream_id`,
      [frontier],
    );
    const level = new Map<string, string[]>();
    for (const r of rows) {
      const list = level.get(r.upstream_id);
      if (list) list.push(r.downstream_id);
      else level.set(r.upstream_id, [r.downstream_id]);
    }
    for (const [id, list] of level) downstream.set(id, list);
    return level;
  });
  const nodes =
    found.length === 0
      ? []
      : (
          await db.query<{ id: string; state: TaskState; reason: string | null }>(
            `SELECT id, state, (error::jsonb)->>'type' AS reason FROM tasks WHERE id = ANY($1::text[])`,
            [found],
          )
        ).rows;
  const candidates = new Set(nodes.filter((d) => d.state === TRANSITIONS.resume.from[0] && d.reason === UPSTREAM_FAILED).map((d) => d.id));
  type Upstream = { id: string; state: TaskState | null };
  const upstreams = new Map<string, Upstream[]>();
  if (candidates.size > 0) {
    const { rows } = await db.query<{ downstream_id: string; id: string; state: TaskState | null }>(
      `SELECT e.downstream_id, e.upstream_id AS id, u.state FROM workflow_edges e LEFT JOIN tasks u ON u.id = e.upstream_id
       WHERE e.downstream_id = ANY($1::text[])`,
      [[...candidates]],
    );
    for (const r of rows) {
      const list = upstreams.get(r.downstream_id);
      const up = { id: r.id, state: r.state };
      if (list) list.push(up);
      else upstreams.set(r.downstream_id, [up]);
    }
  }
  // Kahn's algorithm over the candidates: a task is decided after all its candidate upstreams.
  const waiting = new Map<string, number>();
  const queue: string[] = [];
  for (const id of candidates) {
    const n = (upstreams.get(id) ?? []).filter((u) => candidates.has(u.id)).length;
    waiting.set(id, n);
    if (n === 0) queue.push(id);
  }
  const resumed = new Map<string, number>();
  for (let head = 0; head < queue.length; head++) {
    const id = queue[head];
    const ups = upstreams.get(id) ?? [];
    // Resumable when every upstream can still succeed: the replayed task, one resumed here, one
    // already SUCCEEDED, or one not yet terminal.
    const canRun = (u: Upstream) =>
      u.id === taskId || resumed.has(u.id) || (u.state !== null && (u.state === 'SUCCEEDED' || !TERMINAL_STATES.has(u.state)));
    if (ups.every(canRun)) resumed.set(id, ups.filter((u) => u.state !== 'SUCCEEDED' || u.id === taskId).length);
    for (const next of downstream.get(id) ?? []) {
      if (!candidates.has(next)) continue;
      const left = (waiting.get(next) ?? 1) - 1;
      waiting.set(next, left);
      if (left === 0) queue.push(next);
    }
  }
  let n = 0;
  if (resumed.size > 0) {
    const r = await db.query(
      `UPDATE tasks t SET state = ${sqlState(TRANSITIONS.resume.to)}, unmet_deps = x.unmet, error = NULL, completed_at = NULL, updated_at = $3
       FROM unnest($1::text[], $2::int[]) AS x(id, unmet) WHERE t.id = x.id AND ${sqlStates(TRANSITIONS.resume.from, 't.state')}`,
      [[...resumed.keys()], [...resumed.values()], now],
    );
    n = r.rowCount ?? 0;
  }
  await db.query(
    `UPDATE workflows SET open_tasks = open_tasks + $2, status = 'RUNNING', completed_at = NULL, updated_at = $3 WHERE id = $1`,
    [workflowId, 1 + n, now],
  );
}
