/**
 * Task reads on the pool (no write, autocommit; each function is one statement, so one snapshot).
 * getTask — input: id. Output: the task's record, or null.
 * getAttempts — input: id. Output: its attempt history in attempt order; the final attempt of a
 * finished task, which lives in the task row (see complete-attempts.ts), is added when the history
 * lacks it. Task row and history are read by one statement.
 * listTasks — input: TaskListQuery (filters, limit 1..1000, cursor from src/storage/cursor.ts).
 * Output: newest first (seq descending), at most `limit`, and the cursor of the next page (null on
 * the last one). Throws ValidationError for a cursor this API did not make.
 * findOrphanedAttempts — input: limit, and `external: false` to leave out external consumers'
 * attempts. Output: RUNNING attempts (oldest seq first) with their retry settings: at startup every
 * one of them belongs to a worker that is gone.
 * countByState — Output: task count per state, every state present (0 when none).
 */
import type { Db } from '../db';
import { AttemptRecord, TASK_STATES, TaskRecord, TaskState, TERMINAL_STATES } from '../../../domain/task';
import type { OrphanedAttempt, OrphanSearch, TaskListQuery, TaskPage } from '../../store';
import { sqlNotExternalWorker } from '../../sql/external-worker-sql';
import { AttemptRow, attemptFromRow, parseJson, RETRY_COLUMNS, retryFromRow, TaskRow, taskFromRow } from '../../sql/row-mapping';
import { decodeCursor, encodeCursor } from '../../cursor';
import { sqlState } from '../../sql/state-sql';

/** The task record of `id`, or null. */
export async function getTask(db: Db, id: string): Promise<TaskRecord | null> {
  const { rows } = await db.query<TaskRow>(`SELECT * FROM tasks WHERE id = $1`, [id]);
  return rows.length > 0 ? taskFromRow(rows[0]) : null;
}

/** The attempt history of task `id` (empty for an unknown id). */
export async function getAttempts(db: Db, id: string): Promise<AttemptRecord[]> {
  const { rows } = await db.query<{ task: TaskRow | null; history: AttemptRow[] }>(
    `SELECT (SELECT row_to_json(t) FROM tasks t WHERE t.id = $1) AS task,
       (SELECT COALESCE(json_agg(a ORDER BY a.attempt), '[]'::json) FROM attempts a WHERE a.task_id = $1) AS history`,
    [id],
  );
  const { task: row, history: stored } = rows[0];
  const history = stored.map(attemptFromRow);
  if (row && row.attempts > 0 && TERMINAL_STATES.has(row.state as TaskState) && row.completed_at !== null) {
    if (!history.some((a) => a.attempt === row.attempts)) {
      history.push({
        taskId: row.id,
        attempt: row.attempts,
        workerId: row.worker_id,
        startedAt: row.started_at ?? row.completed_at,
        endedAt: row.completed_at,
        outcome: row.state as TaskState,
        error: parseJson(row.error) as AttemptRecord['error'],
      });
    }
  }
  return history;
}

/** A page of tasks, newest first (see the file header). */
export async function listTasks(db: Db, q: TaskListQuery): Promise<TaskPage> {
  const where: string[] = [];
  const args: unknown[] = [];
  const filter = (column: string, op: string, value: unknown): void => {
    args.push(value);
    where.push(`${column} ${op} $${args.length}`);
  };
  if (q.status) filter('state', '=', q.status);
  if (q.taskType) filter('task_type', '=', q.taskType);
  if (q.queue) filter('queue', '=', q.queue);
  if (q.tenantId) filter('tenant_id', '=', q.tenantId);
  if (q.idempotencyKey !== undefined) filter('idempotency_key', '=', q.idempotencyKey);
  if (q.completedSince !== undefined) filter('completed_at', '>=', q.completedSince);
  if (q.cursor !== undefined) filter('seq', '<', decodeCursor(q.cursor));
  args.push(q.limit + 1);
  const sql = `SELECT * FROM tasks ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY seq DESC LIMIT $${args.length}`;
  const { rows } = await db.query<TaskRow>(sql, args);
  const page = rows.slice(0, q.limit).map(taskFromRow);
  const nextCursor = rows.length > q.limit && page.length > 0 ? encodeCursor(page[page.length - 1].seq) : null;
  return { tasks: page, nextCursor };
}

/** RUNNING attempts, oldest first, at most `limit` (`external: false`: not those of external consumers). */
export async function findOrphanedAttempts(db: Db, limit: number, options?: OrphanSearch): Promise<OrphanedAttempt[]> {
  const own = options?.external === false ? ` AND ${sqlNotExternalWorker()}` : '';
  const { rows } = await db.query<TaskRow>(
    `SELECT id, attempts, ${RETRY_COLUMNS}, worker_id FROM tasks WHERE state = ${sqlState('RUNNING')}${own} ORDER BY seq LIMIT $1`,
    [limit],
  );
  return rows.map((r) => ({ taskId: r.id, attempt: r.attempts, workerId: r.worker_id, retry: retryFromRow(r) }));
}

/** Task count per state (one statement, so one snapshot). */
export async function countByState(db: Db): Promise<Record<TaskState, number>> {
  const { rows } = await db.query<{ state: TaskState; n: number }>(`SELECT state, COUNT(*)::int AS n FROM tasks GROUP BY state`);
  const counts = Object.fromEntries(TASK_STATES.map((s) => [s, 0])) as Record<TaskState, number>;
  for (const r of rows) counts[r.state] = r.n;
  return counts;
}
