/**
 * purgeFinished — inputs: before, now, limit (epoch ms, epoch ms, count). Deletes up to `limit`
 * finished tasks (SUCCEEDED, FAILED, DEAD, CANCELLED) whose `completed_at < before`, with their
 * attempt history, their attempts' log lines and their dependency edges; up to `limit` finished
 * workflows (status other than RUNNING) completed before `before`; and up to `limit` idempotency
 * keys whose `expires_at <= now` (released already: a key is held while `expires_at > now`).
 * Tasks of a RUNNING workflow are kept (a replay may still need their results). DEAD tasks (the
 * dead-letter queue) go too once they are as old as any other finished task.
 * Output: how many tasks and keys were deleted.
 * Guarantee: runs in the write queue's transaction, so a task and its history go together; each
 * DELETE re-checks its condition on the row (state and completed_at; a key's expiry), so a task
 * replayed or resumed by another node meanwhile, or a key another node just took over, stays.
 * Statements: one for tasks with their history, logs and edges (data-modifying CTEs; the deleted
 * ids as one array, `= ANY(…)`, so each table is read through its index), one for workflows, one
 * for keys. Tasks are found through the partial index `tasks_finished (completed_at)`.
 */
import type { Db } from '../db';
import { TERMINAL_STATES } from '../../../domain/task';
import { sqlStates } from '../../sql/state-sql';

const FINISHED = sqlStates([...TERMINAL_STATES]);

const PURGE_TASKS = `
  WITH gone AS (
    DELETE FROM tasks d
    WHERE d.seq IN (
        SELECT seq FROM tasks
        WHERE ${FINISHED} AND completed_at < $1
          AND (workflow_id IS NULL OR workflow_id NOT IN (SELECT id FROM workflows WHERE status = 'RUNNING'))
        LIMIT $2)
      AND (${sqlStates([...TERMINAL_STATES], 'd.state')} AND d.completed_at < $1) IS TRUE
    RETURNING d.id),
  ids AS (SELECT ARRAY(SELECT id FROM gone) AS a),
  history AS (DELETE FROM attempts WHERE task_id = ANY((SELECT a FROM ids)::text[])),
  logs AS (DELETE FROM attempt_logs WHERE task_id = ANY((SELECT a FROM ids)::text[])),
  edges_out AS (DELETE FROM workflow_edges WHERE upstream_id = ANY((SELECT a FROM ids)::text[])),
  edges_in AS (DELETE FROM workflow_edges WHERE downstream_id = ANY((SELECT a FROM ids)::text[]))
  SELECT COUNT(*)::int AS n FROM gone`;

const PURGE_WORKFLOWS = `
  DELETE FROM workflows w
  WHERE w.seq IN (SELECT seq FROM workflows WHERE status <> 'RUNNING' AND completed_at < $1 LIMIT $2)
    AND w.status <> 'RUNNING' AND w.completed_at < $1`;

const PURGE_KEYS = `
  DELETE FROM idempotency_keys k
  WHERE (k.tenant_id, k.key) IN (SELECT tenant_id, key FROM idempotency_keys WHERE expires_at <= $1 LIMIT $2)
    AND k.expires_at <= $1`;

/** Deletes finished tasks, workflows and released keys (see the file header). */
export async function purgeFinished(
  db: Db,
  before: number,
  now: number,
  limit: number,
): Promise<{ tasks: number; idempotencyKeys: number }> {
  const n = Math.max(0, Math.floor(limit));
  if (n === 0) return { tasks: 0, idempotencyKeys: 0 };
  const tasks = await db.query<{ n: number }>(PURGE_TASKS, [before, n]);
  await db.query(PURGE_WORKFLOWS, [before, n]);
  const keys = await db.query(PURGE_KEYS, [now, n]);
  return { tasks: tasks.rows[0].n, idempotencyKeys: keys.rowCount ?? 0 };
}
