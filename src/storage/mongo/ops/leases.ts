/**
 * Attempt leases.
 * extendLeases — inputs: [{taskId, attempt}], until (epoch ms). Sets lease_expires_at = until for
 * each attempt still RUNNING: one `updateOne` per item with the compare-and-set
 * `{_id, attempts, state: 'RUNNING'}`. Output: how many matched.
 * findExpiredLeases — inputs: now, limit. Output: RUNNING attempts whose lease ended before `now`
 * (their worker stopped heartbeating), with the retry settings that decide their next state.
 * Read-only; index `tasks_state_lease`.
 */
import { OrphanedAttempt } from '../../store';
import type { MongoCollections } from '../collections';
import { RETRY_FIELDS, retryFromDoc, TaskDoc } from '../documents';
import { mapBounded, WRITE_PARALLELISM } from './bounded';
import { GUARDS } from '../../../domain/state-machine';
import { inStates } from '../state-filter';

export async function extendLeases(c: MongoCollections, items: Array<{ taskId: string; attempt: number }>, until: number): Promise<number> {
  const results = await mapBounded(items, WRITE_PARALLELISM, (i) =>
    c.tasks.updateOne({ _id: i.taskId, attempts: i.attempt, state: inStates(GUARDS.attempt) }, { $set: { lease_expires_at: until } }),
  );
  return results.reduce((n, r) => n + r.matchedCount, 0);
}

export async function findExpiredLeases(c: MongoCollections, now: number, limit: number): Promise<OrphanedAttempt[]> {
  const docs = await c.tasks
    .find({ state: 'RUNNING', lease_expires_at: { $lt: now } }, { projection: { _id: 1, attempts: 1, worker_id: 1, ...RETRY_FIELDS } })
    .sort({ lease_expires_at: 1 })
    .limit(limit)
    .toArray();
  return docs.map((d) => ({ taskId: d._id, attempt: d.attempts, workerId: d.worker_id, retry: retryFromDoc(d as TaskDoc) }));
}
