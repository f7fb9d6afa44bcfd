/**
 * purgeFinished — inputs: before, now, limit (epoch ms, ms, count). Deletes up to `limit` finished
 * tasks (SUCCEEDED, FAILED, DEAD, CANCELLED) whose `completed_at < before`, with their attempt
 * history and their attempts' log lines, and up to `limit` idempotency keys whose `expires_at <= now` (released already: see
 * insert-tasks.ts, a key is held while `expires_at > now`). DEAD tasks are the dead-letter queue:
 * they go too, but only once they are as old as any other finished task. Output: how many tasks
 * and keys were deleted. Guarantee: one savepoint, so a task and its history go together; never
 * touches a task that is waiting or RUNNING (a replayed DEAD task is PENDING with completed_at
 * cleared). Tasks are found through the (state, seq) index, and only among the oldest
 * {@link PURGE_SCAN_FACTOR} × `limit` finished tasks of each state by `seq` (submission order):
 * SQLite has no index on `completed_at` (it would cost every completion an index write), and a
 * condition on it alone made each pass read every finished task while none had expired, in the
 * writer's transaction (measured: ~0.18 s per million finished tasks; 25 million in a one-hour
 * soak stalled every write ~5 s once a minute). So a finished task is purged once it has expired
 * and is among those oldest; one submitted after many others that finished later (scheduled far
 * ahead, or of a long workflow) waits until those expire or go. Keys are found oldest expiry
 * first through `idempotency_keys_expires` (migration 017), reading only the expired ones.
 * Workflows: tasks of a RUNNING workflow are kept (a replay may still need their results); a
 * finished workflow completed before `before` is deleted (up to `limit`); a purged task takes its
 * dependency edges with it.
 */
import type Database from 'better-sqlite3';
import { TERMINAL_STATES } from '../../../domain/task';
import { sqlStates } from '../../sql/state-sql';

/** Finished tasks examined per state and pass: this many times the pass's `limit`, oldest `seq` first. */
export const PURGE_SCAN_FACTOR = 8;

export function preparePurgeFinished(
  db: Database.Database,
): (before: number, now: number, limit: number) => { tasks: number; idempotencyKeys: number } {
  // One arm per finished state, each an ordered range of the (state, seq) index bounded by @scan.
  const oldest = [...TERMINAL_STATES]
    .map((state) => `SELECT * FROM (SELECT id, completed_at, workflow_id FROM tasks WHERE ${sqlStates([state])} ORDER BY seq LIMIT @scan)`)
    .join(' UNION ALL ');
  const tasks = db
    .prepare(
      `
    DELETE FROM tasks WHERE id IN (
      SELECT id FROM (${oldest})
      WHERE completed_at < @before
        AND (workflow_id IS NULL OR workflow_id NOT IN (SELECT id FROM workflows WHERE status = 'RUNNING'))
      LIMIT @limit)
    RETURNING id`,
    )
    .pluck();
  const history = db.prepare(`DELETE FROM attempts WHERE task_id = ?`);
  const logs = db.prepare(`DELETE FROM attempt_logs WHERE task_id = ?`);
  const edgesFrom = db.prepare(`DELETE FROM workflow_edges WHERE upstream_id = ?`);
  const edgesTo = db.prepare(`DELETE FROM workflow_edges WHERE downstream_id = ?`);
  const workflows = db.prepare(`
    DELETE FROM workflows WHERE seq IN (
      SELECT seq FROM workflows WHERE status <> 'RUNNING' AND completed_at < ? LIMIT ?)`);
  const keys = db.prepare(`
    DELETE FROM idempotency_keys WHERE (tenant_id, key) IN (
      SELECT tenant_id, key FROM idempotency_keys INDEXED BY idempotency_keys_expires
      WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`);
  return (before, now, limit) => {
    const n = Math.max(0, Math.floor(limit));
    if (n === 0) return { tasks: 0, idempotencyKeys: 0 };
    const ids = tasks.all({ before, limit: n, scan: n * PURGE_SCAN_FACTOR }) as string[];
    for (const id of ids) {
      history.run(id);
      logs.run(id);
      edgesFrom.run(id);
      edgesTo.run(id);
    }
    workflows.run(before, n);
    return { tasks: ids.length, idempotencyKeys: keys.run(now, n).changes };
  };
}
