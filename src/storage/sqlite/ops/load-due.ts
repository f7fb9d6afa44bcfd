/**
 * loadDue — inputs: partition, until (epoch ms), limit.
 * Output: DueEntry[] of SCHEDULED/PENDING/RETRYING tasks with due_at <= until, ordered by
 * (due_at, seq), at most `limit`. Guarantee: reads committed data only; two range scans, one on
 * each waiting-task index (`tasks_scheduled_due`, `tasks_ready_due`: migrations 010 and 011),
 * each stopping at `limit` rows of the partition, merged in (due_at, seq) order.
 * Cost: the indexes are in due order (migration 011), so a scan also steps over the other
 * partitions' entries due before its last row; it checks their partition in the index entry
 * without reading their rows.
 */
import type Database from 'better-sqlite3';
import { DueEntry } from '../../../domain/task';
import { DUE_COLUMNS, dueEntryFromRow, TaskRow } from '../../sql/row-mapping';

/**
 * The waiting-task indexes and their states as each partial index covers them (a query must name
 * them as its index does). Queries name the index (`INDEXED BY`): without statistics the planner
 * would take `tasks_state_seq` and sort, and a query the index cannot answer fails at prepare.
 */
export const WAITING_INDEXES = [
  { index: 'tasks_scheduled_due', states: `state = 'SCHEDULED'` },
  { index: 'tasks_ready_due', states: `state IN ('PENDING', 'RETRYING')` },
] as const;

/** Merges rows sorted by (due_at, seq) into one such list of at most `limit`. */
export function mergeByDue(lists: TaskRow[][], limit: number): TaskRow[] {
  return lists
    .flat()
    .sort((a, b) => a.due_at - b.due_at || a.seq - b.seq)
    .slice(0, limit);
}

export function prepareLoadDue(db: Database.Database): (partition: number, until: number, limit: number) => DueEntry[] {
  const stmts = WAITING_INDEXES.map(({ index, states }) =>
    db.prepare(`
      SELECT ${DUE_COLUMNS} FROM tasks INDEXED BY ${index}
      WHERE partition = ? AND due_at <= ? AND ${states}
      ORDER BY due_at, seq
      LIMIT ?`),
  );
  return (partition, until, limit) =>
    mergeByDue(
      stmts.map((s) => s.all(partition, until, limit) as TaskRow[]),
      limit,
    ).map(dueEntryFromRow);
}
