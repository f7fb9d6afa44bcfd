/**
 * getAttemptLog — inputs: taskId, attempt. Output: the attempt's kept lines, oldest first, with
 * the count dropped before the first one (none stored: no lines, 0 dropped).
 * Guarantee: one statement on the pool (a primary-key range), so it reads one snapshot and sees
 * every committed append.
 */
import type { Db } from '../db';
import { AttemptLog, attemptLogOf } from '../../../domain/attempt-log';

interface LineRow {
  n: number;
  at: number;
  message: string;
  fields: string | null;
  truncated: number;
}

export async function getAttemptLog(db: Db, taskId: string, attempt: number): Promise<AttemptLog> {
  const { rows } = await db.query<LineRow>(
    `SELECT n, at, message, fields, truncated FROM attempt_logs WHERE task_id = $1 AND attempt = $2 ORDER BY n`,
    [taskId, attempt],
  );
  return attemptLogOf(
    taskId,
    attempt,
    rows.map((r) => ({ n: r.n, at: r.at, message: r.message, fields: r.fields, truncated: r.truncated === 1 })),
  );
}
