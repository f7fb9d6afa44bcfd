/**
 * appendAttemptLogs — inputs: [{taskId, attempt, lines: [{n, at, message, fields, truncated}],
 * keepFrom}], now. For each item in input order: inserts its lines (`INSERT OR IGNORE` on (task,
 * attempt, n): a line already stored stays), then deletes that attempt's lines numbered below
 * `keepFrom`. Output: how many lines were inserted.
 * Guarantee: one savepoint of the writer's transaction, answered after the commit; an attempt's
 * lines never exceed what its worker's window holds plus one batch. Advisory: not fenced by the
 * task's state (the dispatcher sends only lines of attempts it runs).
 */
import type Database from 'better-sqlite3';
import type { AttemptLogAppend } from '../../../domain/attempt-log';

export function prepareAppendAttemptLogs(db: Database.Database): (logs: AttemptLogAppend[], now: number) => number {
  const insert = db.prepare(
    `INSERT OR IGNORE INTO attempt_logs (task_id, attempt, n, at, message, fields, truncated) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const trim = db.prepare(`DELETE FROM attempt_logs WHERE task_id = ? AND attempt = ? AND n < ?`);
  return (logs) => {
    let added = 0;
    for (const l of logs) {
      for (const line of l.lines) {
        added += insert.run(l.taskId, l.attempt, line.n, line.at, line.message, line.fields, line.truncated ? 1 : 0).changes;
      }
      trim.run(l.taskId, l.attempt, l.keepFrom);
    }
    return added;
  };
}
