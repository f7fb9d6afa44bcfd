/**
 * renewLease — inputs: partition, owner, epoch, now, ttlMs. One `findOneAndUpdate` whose filter
 * `{_id, owner, epoch, expires_at > now}` is the compare-and-set, with `$max: {expires_at: now +
 * ttlMs}` (a renewal never shortens a lease: a holder whose clock stepped back cannot hand it to
 * others early). Output: the lease after the renewal, or null when lost (expired, released, or a
 * newer epoch). Guarantee: never extends a lease someone else holds.
 */
import { PartitionLease } from '../../cluster-store';
import type { MongoCollections } from '../collections';
import { leaseFromDoc } from './acquire-lease';

export async function renewLease(
  c: MongoCollections,
  partition: number,
  owner: string,
  epoch: number,
  now: number,
  ttlMs: number,
): Promise<PartitionLease | null> {
  const doc = await c.leases.findOneAndUpdate(
    { _id: partition, owner, epoch, expires_at: { $gt: now } },
    { $max: { expires_at: now + ttlMs } },
    { returnDocument: 'after' },
  );
  return doc ? leaseFromDoc(doc) : null;
}
