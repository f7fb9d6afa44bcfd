/**
 * appendAttemptLogs — inputs: [{taskId, attempt, lines: [{n, at, message, fields, truncated}],
 * keepFrom}], now. For each item in input order: one unordered `bulkWrite` of upserts on
 * `_id: <task>:<attempt>:<n>` with `$setOnInsert` (a line already stored stays as it is), then a
 * `deleteMany` of that attempt's lines numbered below `keepFrom`. Output: how many lines were added.
 * Guarantee: idempotent (a repeated item adds nothing); crash window: a process dying between the
 * two writes leaves up to one batch of lines more than the bounds, which the attempt's next
 * append (or the reader, which needs no bound) tolerates. Advisory, like progress: not fenced by
 * the task's state (the dispatcher sends only lines of attempts it runs).
 */
import type { AttemptLogAppend } from '../../../domain/attempt-log';
import type { MongoCollections } from '../collections';
import { attemptLogLineId } from '../attempt-log-documents';

export async function appendAttemptLogs(c: MongoCollections, logs: AttemptLogAppend[]): Promise<number> {
  let added = 0;
  for (const l of logs) {
    if (l.lines.length > 0) {
      const res = await c.attemptLogs.bulkWrite(
        l.lines.map((line) => ({
          updateOne: {
            filter: { _id: attemptLogLineId(l.taskId, l.attempt, line.n) },
            update: {
              $setOnInsert: {
                task_id: l.taskId,
                attempt: l.attempt,
                n: line.n,
                at: line.at,
                message: line.message,
                fields: line.fields,
                truncated: line.truncated,
              },
            },
            upsert: true,
          },
        })),
        { ordered: false },
      );
      added += res.upsertedCount;
    }
    await c.attemptLogs.deleteMany({ task_id: l.taskId, attempt: l.attempt, n: { $lt: l.keepFrom } });
  }
  return added;
}
