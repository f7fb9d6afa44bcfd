/**
 * reportProgress — inputs: [{taskId, attempt, text}] (progress values as JSON text, validated by
 * the adapter), now. Sets progress, progress_attempt, progress_at = now for each attempt still
 * RUNNING (compare-and-set on id, attempts, state), in input order, so a later report of the same
 * task wins. Output: how many rows were written.
 * Guarantee: one savepoint of the writer's transaction, answered after the commit. Progress is
 * advisory: callers may throttle and drop reports (see the worker), the store never reads it back.
 */
import type Database from 'better-sqlite3';
import { GUARDS } from '../../../domain/state-machine';
import { sqlStates } from '../../sql/state-sql';

export function prepareReportProgress(
  db: Database.Database,
): (reports: Array<{ taskId: string; attempt: number; text: string }>, now: number) => number {
  const stmt = db.prepare(
    `UPDATE tasks SET progress = ?, progress_attempt = ?, progress_at = ? WHERE id = ? AND attempts = ? AND ${sqlStates(GUARDS.attempt)}`,
  );
  return (reports, now) => reports.reduce((n, r) => n + stmt.run(r.text, r.attempt, now, r.taskId, r.attempt).changes, 0);
}
