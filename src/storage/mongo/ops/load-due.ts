/**
 * loadDue — inputs: partition, until (epoch ms), limit. Output: DueEntry[] of SCHEDULED, PENDING
 * and RETRYING tasks of the partition with due_at ≤ until, in (due_at, seq) order, at most `limit`.
 * Guarantee: read-only; index `tasks_partition_state_due` (partition, state, due_at, seq): one
 * range per waiting state, merged in due order by the server.
 */
import { DueEntry, WAITING_STATES } from '../../../domain/task';
import type { MongoCollections } from '../collections';
import { DUE_FIELDS, dueEntryFromDoc } from '../documents';

export async function loadDue(c: MongoCollections, partition: number, until: number, limit: number): Promise<DueEntry[]> {
  if (limit <= 0) return [];
  const docs = await c.tasks
    .find({ partition, state: { $in: [...WAITING_STATES] }, due_at: { $lte: until } }, { projection: DUE_FIELDS })
    .sort({ due_at: 1, seq: 1 })
    .limit(limit)
    .toArray();
  return docs.map(dueEntryFromDoc);
}
