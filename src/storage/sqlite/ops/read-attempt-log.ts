/**
 * getAttemptLog — inputs: taskId, attempt. Output: the attempt's kept lines, oldest first, with
 * the count dropped before the first one (none stored: no lines, 0 dropped).
 * Guarantee: one statement on the caller's connection (a primary-key range), so it sees every
 * committed append.
 */
import type Database from 'better-sqlite3';
import { AttemptLog, AttemptLogLine, attemptLogOf } from '../../../domain/attempt-log';

interface LineRow {
  n: number;
  at: number;
  message: string;
  fields: string | null;
  truncated: number;
}

export function prepareGetAttemptLog(db: Database.Database): (taskId: string, attempt: number) => AttemptLog {
  const select = db.prepare(`SELECT n, at, message, fields, truncated FROM attempt_logs WHERE task_id = ? AND attempt = ? ORDER BY n`);
  return (taskId, attempt) => {
    const rows = select.all(taskId, attempt) as LineRow[];
    const lines: AttemptLogLine[] = rows.map((r) => ({
      n: r.n,
      at: r.at,
      message: r.message,
      fields: r.fields,
      truncated: r.truncated === 1,
    }));
    return attemptLogOf(taskId, attempt, lines);
  };
}
