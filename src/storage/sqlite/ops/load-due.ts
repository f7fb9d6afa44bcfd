/**
 * loadDue — inputs: partition, until (epoch ms), limit.
 * Output: DueEntry[] of SCHEDULED/PENDING/RETRYING tasks with due_at <= until, ordered by
 * (due_at, seq). Guarantee: a range scan on tasks_waiting_due; reads committed data only.
 */
import type Database from 'better-sqlite3';
import { DueEntry } from '../../../domain/task';
import { DUE_COLUMNS, dueEntryFromRow, TaskRow } from '../row-mapping';

export function prepareLoadDue(db: Database.Database): (partition: number, until: number, limit: number) => DueEntry[] {
  const stmt = db.prepare(`
    SELECT ${DUE_COLUMNS} FROM tasks
    WHERE partition = ? AND due_at <= ? AND state IN ('SCHEDULED', 'PENDING', 'RETRYING')
    ORDER BY due_at, seq
    LIMIT ?`);
  return (partition, until, limit) => (stmt.all(partition, until, limit) as TaskRow[]).map(dueEntryFromRow);
}
