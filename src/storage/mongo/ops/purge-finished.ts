/**
 * purgeFinished — inputs: before, now (epoch ms), limit. Deletes up to `limit` finished tasks
 * (SUCCEEDED, FAILED, DEAD, CANCELLED) whose completed_at < before — their attempt history is
 * embedded, so it goes with them in the same delete — and up to `limit` idempotency keys whose
 * expires_at ≤ now (released already; see idempotency-keys.ts). Output: how many of each.
 * Guarantee: the ids are found first (index `tasks_state_completed`), then deleted with the same
 * filter repeated as a compare-and-set, so a task replayed from the dead-letter queue meanwhile
 * (PENDING, completed_at cleared) is not touched; waiting and RUNNING tasks never are. Keys are
 * deleted here, not by a TTL index: whether a key is released is decided by the `now` passed in
 * (see docs/MONGODB.md).
 */
import { TERMINAL_STATES } from '../../../domain/task';
import type { MongoCollections } from '../collections';

export async function purgeFinished(c: MongoCollections, before: number, now: number, limit: number): Promise<{ tasks: number; idempotencyKeys: number }> {
  const n = Math.max(0, Math.floor(limit));
  if (n === 0) return { tasks: 0, idempotencyKeys: 0 };
  const finished = { state: { $in: [...TERMINAL_STATES] }, completed_at: { $lt: before } };
  const ids = (await c.tasks.find(finished, { projection: { _id: 1 } }).limit(n).toArray()).map((d) => d._id);
  const tasks = ids.length === 0 ? 0 : (await c.tasks.deleteMany({ _id: { $in: ids }, ...finished })).deletedCount;
  const released = { expires_at: { $lte: now } };
  const keyIds = (await c.idempotencyKeys.find(released, { projection: { _id: 1 } }).limit(n).toArray()).map((d) => d._id);
  const idempotencyKeys = keyIds.length === 0 ? 0 : (await c.idempotencyKeys.deleteMany({ _id: { $in: keyIds }, ...released })).deletedCount;
  return { tasks, idempotencyKeys };
}
