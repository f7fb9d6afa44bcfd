/**
 * reportProgress — inputs: [{taskId, attempt, text}] (progress values as JSON text, validated by
 * the adapter), now. One `updateOne` per report, in input order (so a later report of the same
 * task wins), with the compare-and-set filter `{_id, attempts, state: 'RUNNING'}`, setting
 * progress, progress_attempt and progress_at. Output: how many matched.
 * Guarantee: each report is one single-document update; a report of an attempt that ended
 * changes nothing. Progress is advisory (never read back by the task), so no order of writes
 * across tasks matters.
 */
import type { MongoCollections } from '../collections';
import { GUARDS } from '../../../domain/state-machine';
import { inStates } from '../state-filter';

export async function reportProgress(
  c: MongoCollections,
  reports: Array<{ taskId: string; attempt: number; text: string }>,
  now: number,
): Promise<number> {
  let n = 0;
  for (const r of reports) {
    const res = await c.tasks.updateOne(
      { _id: r.taskId, attempts: r.attempt, state: inStates(GUARDS.attempt) },
      { $set: { progress: r.text, progress_attempt: r.attempt, progress_at: now } },
    );
    n += res.matchedCount;
  }
  return n;
}
