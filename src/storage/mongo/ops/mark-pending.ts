/**
 * markPending — inputs: task ids, now. Transition `due`: SCHEDULED/RETRYING → PENDING where
 * due_at ≤ now, as one `updateMany` whose filter is the compare-and-set (state and due time), then
 * one read of which of the ids are PENDING. Output: those ids, in input order (ids that already
 * were PENDING count; cancelled or claimed ones do not). Guarantee: never touches a task in any
 * other state; each document changes atomically, so a concurrent cancel or claim either happens
 * before (the filter misses) or after (it sees PENDING).
 * With `epoch` (cluster mode, the caller's lease epoch): both filters also require owner_epoch
 * (absent = 0) <= epoch and the update sets owner_epoch = epoch, so a task fenced by a newer owner
 * is neither changed nor returned.
 * Both filters also name the ids' partition (`partitionOf`; a partition owner's ids share one): on
 * MongoDB the `_id` index decides anyway, but FerretDB only hands top-level equalities to its
 * backend, and without one it decodes every document of the collection for each call.
 */
import { partitionOf } from '../../../domain/partition';
import type { MongoCollections } from '../collections';
import { epochAtMost } from './fencing';
import { TRANSITIONS } from '../../../domain/state-machine';
import { inStates } from '../state-filter';

export async function markPending(c: MongoCollections, partitions: number, ids: string[], now: number, epoch?: number): Promise<string[]> {
  if (ids.length === 0) return [];
  const unique = [...new Set(ids)];
  const owned = [...new Set(unique.map((id) => partitionOf(id, partitions)))];
  const fence = { partition: owned.length === 1 ? owned[0] : { $in: owned }, ...(epoch === undefined ? {} : epochAtMost(epoch)) };
  await c.tasks.updateMany(
    { _id: { $in: unique }, state: inStates(TRANSITIONS.due.from), due_at: { $lte: now }, ...fence },
    {
      $set:
        epoch === undefined
          ? { state: TRANSITIONS.due.to, updated_at: now }
          : { state: TRANSITIONS.due.to, updated_at: now, owner_epoch: epoch },
    },
  );
  const pending = new Set(
    (await c.tasks.find({ _id: { $in: unique }, state: TRANSITIONS.due.to, ...fence }, { projection: { _id: 1 } }).toArray()).map(
      (d) => d._id,
    ),
  );
  return ids.filter((id) => pending.has(id));
}
