/**
 * Attempt leases.
 * heartbeatAttempts — inputs: [{taskId, attempt}], until (epoch ms). Sets lease_expires_at = until
 * for each attempt still RUNNING: one `updateOne` per item with the compare-and-set
 * `{_id, attempts, state: 'RUNNING'}`, then one `find` of those matched whose `cancel_requested`
 * is set (by `_id`, same attempt). FerretDB 1.x has no projection in findAndModify, so the flag is
 * read apart: a cancel stored between the two is seen at the next heartbeat. Output: how many
 * matched, and those of them whose cancel was requested. (`extendLeases` is its count.)
 * findExpiredLeases — inputs: now, limit. Output: RUNNING attempts whose lease ended before `now`
 * (their worker stopped heartbeating), with the retry settings that decide their next state.
 * Read-only; index `tasks_state_lease`.
 */
import { AttemptHeartbeat, OrphanedAttempt } from '../../store';
import type { MongoCollections } from '../collections';
import { RETRY_FIELDS, retryFromDoc, TaskDoc } from '../documents';
import { mapBounded, WRITE_PARALLELISM } from './bounded';
import { GUARDS } from '../../../domain/state-machine';
import { inStates } from '../state-filter';

export async function heartbeatAttempts(
  c: MongoCollections,
  items: Array<{ taskId: string; attempt: number }>,
  until: number,
): Promise<AttemptHeartbeat> {
  const results = await mapBounded(items, WRITE_PARALLELISM, (i) =>
    c.tasks.updateOne({ _id: i.taskId, attempts: i.attempt, state: inStates(GUARDS.attempt) }, { $set: { lease_expires_at: until } }),
  );
  const extended = items.filter((_, k) => results[k].matchedCount === 1);
  if (extended.length === 0) return { extended: 0, cancelRequested: [] };
  const attemptOf = new Map(extended.map((i) => [i.taskId, i.attempt]));
  const cancelled = await c.tasks
    .find({ _id: { $in: [...attemptOf.keys()] }, cancel_requested: true }, { projection: { _id: 1, attempts: 1 } })
    .toArray();
  return {
    extended: extended.length,
    cancelRequested: cancelled.filter((d) => attemptOf.get(d._id) === d.attempts).map((d) => ({ taskId: d._id, attempt: d.attempts })),
  };
}

export async function findExpiredLeases(c: MongoCollections, now: number, limit: number): Promise<OrphanedAttempt[]> {
  const docs = await c.tasks
    .find({ state: 'RUNNING', lease_expires_at: { $lt: now } }, { projection: { _id: 1, attempts: 1, worker_id: 1, ...RETRY_FIELDS } })
    .sort({ lease_expires_at: 1 })
    .limit(limit)
    .toArray();
  return docs.map((d) => ({ taskId: d._id, attempt: d.attempts, workerId: d.worker_id, retry: retryFromDoc(d as TaskDoc) }));
}
