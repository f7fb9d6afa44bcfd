/**
 * reportProgress — inputs: [{taskId, attempt, text}] (progress values as JSON text, validated by
 * the store), now (epoch ms). Sets progress, progress_attempt, progress_at = now for each attempt
 * still RUNNING (compare-and-set on id, attempts, state: GUARDS.attempt); of several reports of
 * one attempt the last in input order wins. Output: how many reports were written (each report of
 * an attempt that took the write counts, as if they had been written one by one in order).
 * Guarantee: one set-based UPDATE … FROM unnest(…) in the write queue's transaction, the reports
 * given in id order (as the other set-based task writes, so rows are locked in that order);
 * answered after the commit. Progress is advisory: callers may throttle and drop
 * reports (see the worker), the store never reads it back.
 */
import { atMs } from '../epoch-ms';
import type { Db } from '../db';
import { GUARDS } from '../../../domain/state-machine';
import { sqlStates } from '../../sql/state-sql';

export async function reportProgress(db: Db, rows: Array<{ taskId: string; attempt: number; text: string }>, now: number): Promise<number> {
  // The last report of each attempt, and how many reports it stands for.
  const last = new Map<string, { taskId: string; attempt: number; text: string; reports: number }>();
  for (const r of rows) {
    const key = `${r.attempt}:${r.taskId}`;
    last.set(key, { ...r, reports: (last.get(key)?.reports ?? 0) + 1 });
  }
  const reports = [...last.values()].sort((a, b) => (a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : a.attempt - b.attempt));
  const res = await db.query<{ reports: number }>(
    `UPDATE tasks t SET progress = r.text, progress_attempt = r.attempt, progress_at = $5
     FROM unnest($1::text[], $2::int[], $3::text[], $4::int[]) AS r(id, attempt, text, reports)
     WHERE t.id = r.id AND t.attempts = r.attempt AND ${sqlStates(GUARDS.attempt, 't.state')}
     RETURNING r.reports`,
    [reports.map((r) => r.taskId), reports.map((r) => r.attempt), reports.map((r) => r.text), reports.map((r) => r.reports), atMs(now)],
  );
  return res.rows.reduce((n, r) => n + r.reports, 0);
}
