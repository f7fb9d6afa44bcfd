/**
 * loadDue — inputs: partition, until (epoch ms), limit.
 * Output: DueEntry[] of SCHEDULED/PENDING/RETRYING tasks with due_at <= until, ordered by
 * (due_at, seq), at most `limit`. Guarantee: reads committed data only; two range scans, one on
 * each waiting-task index (`tasks_scheduled_due`, `tasks_ready_due`: migration 010), each at most
 * `limit` rows, merged in (due_at, seq) order.
 */
import type Database from 'better-sqlite3';
import { DueEntry } from '../../../domain/task';
import { DUE_COLUMNS, dueEntryFromRow, TaskRow } from '../row-mapping';

/** The waiting states as each partial index covers them (a query must name them as its index does). */
export const WAITING_INDEX_STATES = [`state = 'SCHEDULED'`, `state IN ('PENDING', 'RETRYING')`] as const;

/** Merges rows sorted by (due_at, seq) into one such list of at most `limit`. */
export function mergeByDue(lists: TaskRow[][], limit: number): TaskRow[] {
  return lists.flat().sort((a, b) => a.due_at - b.due_at || a.seq - b.seq).slice(0, limit);
}

export function prepareLoadDue(db: Database.Database): (partition: number, until: number, limit: number) => DueEntry[] {
  const stmts = WAITING_INDEX_STATES.map((states) =>
    db.prepare(`
      SELECT ${DUE_COLUMNS} FROM tasks
      WHERE partition = ? AND due_at <= ? AND ${states}
      ORDER BY due_at, seq
      LIMIT ?`),
  );
  return (partition, until, limit) => mergeByDue(stmts.map((s) => s.all(partition, until, limit) as TaskRow[]), limit).map(dueEntryFromRow);
}
