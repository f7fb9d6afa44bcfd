/**
 * appendAttemptLogs — inputs: [{taskId, attempt, lines: [{n, at, message, fields, truncated}],
 * keepFrom}]. Inserts every line (ON CONFLICT DO NOTHING on (task, attempt, n): a line already
 * stored stays), then deletes each attempt's lines numbered below its highest `keepFrom` of the
 * batch (a worker's window only moves forward). Output: how many lines were inserted.
 * Guarantee: two set-based statements (INSERT … SELECT FROM unnest, DELETE … USING unnest) in the
 * write queue's transaction, answered after the commit; an attempt's lines never exceed what its
 * worker's window holds plus one batch. Advisory: not fenced by the task's state (the dispatcher
 * sends only lines of attempts it runs).
 */
import { atMs } from '../epoch-ms';
import type { Db } from '../db';
import type { AttemptLogAppend } from '../../../domain/attempt-log';

export async function appendAttemptLogs(db: Db, logs: AttemptLogAppend[]): Promise<number> {
  const lines = logs.flatMap((l) => l.lines.map((line) => ({ taskId: l.taskId, attempt: l.attempt, line })));
  let added = 0;
  if (lines.length > 0) {
    const res = await db.query(
      `INSERT INTO attempt_logs (task_id, attempt, n, at, message, fields, truncated)
       SELECT * FROM unnest($1::text[], $2::int[], $3::int[], $4::bigint[], $5::text[], $6::text[], $7::int[])
       ORDER BY 1, 2, 3
       ON CONFLICT (task_id, attempt, n) DO NOTHING`,
      [
        lines.map((l) => l.taskId),
        lines.map((l) => l.attempt),
        lines.map((l) => l.line.n),
        lines.map((l) => atMs(l.line.at)),
        lines.map((l) => l.line.message),
        lines.map((l) => l.line.fields),
        lines.map((l) => (l.line.truncated ? 1 : 0)),
      ],
    );
    added = res.rowCount ?? 0;
  }
  const keep = new Map<string, { taskId: string; attempt: number; keepFrom: number }>();
  for (const l of logs) {
    const key = `${l.attempt}:${l.taskId}`;
    keep.set(key, { taskId: l.taskId, attempt: l.attempt, keepFrom: Math.max(l.keepFrom, keep.get(key)?.keepFrom ?? l.keepFrom) });
  }
  const trims = [...keep.values()].filter((k) => k.keepFrom > 1);
  if (trims.length > 0) {
    await db.query(
      `DELETE FROM attempt_logs a USING unnest($1::text[], $2::int[], $3::int[]) AS k(task_id, attempt, keep_from)
       WHERE a.task_id = k.task_id AND a.attempt = k.attempt AND a.n < k.keep_from`,
      [trims.map((k) => k.taskId), trims.map((k) => k.attempt), trims.map((k) => k.keepFrom)],
    );
  }
  return added;
}
