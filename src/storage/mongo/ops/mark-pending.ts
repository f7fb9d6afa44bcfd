/**
 * markPending — inputs: task ids, now. Transition `due`: SCHEDULED/RETRYING → PENDING where
 * due_at ≤ now, as one `updateMany` whose filter is the compare-and-set (state and due time), then
 * one read of which of the ids are PENDING. Output: those ids, in input order (ids that already
 * were PENDING count; cancelled or claimed ones do not). Guarantee: never touches a task in any
 * other state; each document changes atomically, so a concurrent cancel or claim either happens
 * before (the filter misses) or after (it sees PENDING).
 */
import type { MongoCollections } from '../collections';

export async function markPending(c: MongoCollections, ids: string[], now: number): Promise<string[]> {
  if (ids.length === 0) return [];
  const unique = [...new Set(ids)];
  await c.tasks.updateMany(
    { _id: { $in: unique }, state: { $in: ['SCHEDULED', 'RETRYING'] }, due_at: { $lte: now } },
    { $set: { state: 'PENDING', updated_at: now } },
  );
  const pending = new Set(
    (await c.tasks.find({ _id: { $in: unique }, state: 'PENDING' }, { projection: { _id: 1 } }).toArray()).map((d) => d._id),
  );
  return ids.filter((id) => pending.has(id));
}
