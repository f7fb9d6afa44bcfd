/**
 * getAttemptLog — inputs: taskId, attempt. Output: the attempt's kept lines, oldest first, with
 * the count dropped before the first one (none stored: no lines, 0 dropped).
 * Guarantee: one `find` on the index `attempt_logs_attempt_n` (no write; sees every acknowledged append).
 */
import { AttemptLog, attemptLogOf } from '../../../domain/attempt-log';
import type { MongoCollections } from '../collections';

export async function getAttemptLog(c: MongoCollections, taskId: string, attempt: number): Promise<AttemptLog> {
  const docs = await c.attemptLogs.find({ task_id: taskId, attempt }).sort({ n: 1 }).toArray();
  return attemptLogOf(
    taskId,
    attempt,
    docs.map((d) => ({ n: d.n, at: d.at, message: d.message, fields: d.fields ?? null, truncated: d.truncated === true })),
  );
}
