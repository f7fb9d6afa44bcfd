/**
 * releaseLease — inputs: partition, owner, epoch. One `updateOne` with the compare-and-set filter
 * `{_id, owner, epoch}`: expires_at = 0, so the partition is free at once; the document (and its
 * epoch) stays. Output: whether the caller still held it. Guarantee: never frees a lease granted
 * to someone else.
 */
import type { MongoCollections } from '../collections';

export async function releaseLease(c: MongoCollections, partition: number, owner: string, epoch: number): Promise<boolean> {
  return (await c.leases.updateOne({ _id: partition, owner, epoch }, { $set: { expires_at: 0 } })).matchedCount === 1;
}
