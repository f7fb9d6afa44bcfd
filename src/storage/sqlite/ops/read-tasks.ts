/**
 * Read operations (no writes, no group commit): getTask, getAttempts, listTasks,
 * findOrphanedAttempts. They read committed data only (WAL snapshot). Counts: aggregates.ts.
 */
import type Database from 'better-sqlite3';
import { AttemptRecord, TaskRecord, TaskState, TERMINAL_STATES } from '../../../domain/task';
import { OrphanedAttempt, OrphanSearch, TaskListQuery, TaskPage } from '../../store';
import { AttemptRow, attemptFromRow, parseJson, RETRY_COLUMNS, retryFromRow, TaskRow, taskFromRow } from '../../sql/row-mapping';
import { decodeCursor, encodeCursor } from '../../cursor';
import { sqlNotExternalWorker } from '../../sql/external-worker-sql';

export interface TaskReads {
  getTask(id: string): TaskRecord | null;
  getAttempts(id: string): AttemptRecord[];
  listTasks(q: TaskListQuery): TaskPage;
  findOrphanedAttempts(limit: number, options?: OrphanSearch): OrphanedAttempt[];
}

export function prepareReads(db: Database.Database): TaskReads {
  const byId = db.prepare(`SELECT * FROM tasks WHERE id = ?`);
  const attempts = db.prepare(`SELECT * FROM attempts WHERE task_id = ? ORDER BY attempt`);
  const orphanSql = (condition: string) => `
    SELECT id, attempts, ${RETRY_COLUMNS}, worker_id, started_at, due_at
    FROM tasks WHERE state = 'RUNNING'${condition} ORDER BY seq LIMIT ?`;
  const orphans = db.prepare(orphanSql(''));
  const ownOrphans = db.prepare(orphanSql(` AND ${sqlNotExternalWorker()}`));
  return {
    getTask: (id) => {
      const row = byId.get(id) as TaskRow | undefined;
      return row ? taskFromRow(row) : null;
    },
    getAttempts: (id) => {
      const history = (attempts.all(id) as AttemptRow[]).map(attemptFromRow);
      const row = byId.get(id) as TaskRow | undefined;
      // The final attempt of a finished task lives in the task row (see complete-attempts.ts).
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
    },
    listTasks: (q) => {
      const where: string[] = [];
      const args: unknown[] = [];
      const filter = (clause: string, value: unknown): void => {
        where.push(clause);
        args.push(value);
      };
      if (q.status) filter('state = ?', q.status);
      if (q.taskType) filter('task_type = ?', q.taskType);
      if (q.queue) filter('queue = ?', q.queue);
      if (q.tenantId) filter('tenant_id = ?', q.tenantId);
      if (q.idempotencyKey !== undefined) filter('idempotency_key = ?', q.idempotencyKey);
      if (q.completedSince !== undefined) filter('completed_at >= ?', q.completedSince);
      if (q.cursor !== undefined) filter('seq < ?', decodeCursor(q.cursor));
      const sql = `SELECT * FROM tasks ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY seq DESC LIMIT ?`;
      const rows = db.prepare(sql).all(...args, q.limit + 1) as TaskRow[];
      const page = rows.slice(0, q.limit).map(taskFromRow);
      const nextCursor = rows.length > q.limit && page.length > 0 ? encodeCursor(page[page.length - 1].seq) : null;
      return { tasks: page, nextCursor };
    },
    findOrphanedAttempts: (limit, options) =>
      ((options?.external === false ? ownOrphans : orphans).all(limit) as TaskRow[]).map((r) => ({
        taskId: r.id,
        attempt: r.attempts,
        workerId: r.worker_id,
        retry: retryFromRow(r),
        // Claimed ahead and never sent (claimTasksAhead leaves the start empty): retried free at its due time.
        ...(r.started_at === null ? { neverStartedDueAt: r.due_at } : {}),
      })),
  };
}
