/**
 * acquireLease — inputs: partition, owner, now, ttlMs. Grants `partition_leases/<partition>` to
 * `owner` until now + ttlMs with epoch = previous + 1, only when free (no document, or
 * expires_at <= now). Order: read the document; none → `insertOne` with epoch 1 (a duplicate key
 * means another node inserted first: not granted); expired → `updateOne` whose filter
 * `{_id, epoch: read epoch, expires_at <= now}` is the compare-and-set. Output: the grant, or the
 * lease found. Guarantee: the unique `_id` and the atomic single-document update (MongoDB) make
 * at most one caller win each epoch; FerretDB 1.x does not apply updates atomically across
 * connections (docs/MONGODB.md), so there two racing nodes could both win one expired lease.
 */
import { LeaseGrant } from '../../cluster-store';
import type { LeaseDoc, MongoCollections } from '../collections';

const DUPLICATE_KEY = 11000;

export function leaseFromDoc(d: LeaseDoc): { partition: number; owner: string; epoch: number; expiresAt: number } {
  return { partition: d._id, owner: d.owner, epoch: d.epoch, expiresAt: d.expires_at };
}

export async function acquireLease(c: MongoCollections, partition: number, owner: string, now: number, ttlMs: number): Promise<LeaseGrant> {
  const expiresAt = now + ttlMs;
  const doc = await c.leases.findOne({ _id: partition });
  if (!doc) {
    try {
      await c.leases.insertOne({ _id: partition, owner, epoch: 1, expires_at: expiresAt });
      return { granted: true, lease: { partition, owner, epoch: 1, expiresAt } };
    } catch (err) {
      if ((err as { code?: unknown }).code !== DUPLICATE_KEY) throw err;
      const current = await c.leases.findOne({ _id: partition });
      return { granted: false, current: current ? leaseFromDoc(current) : null };
    }
  }
  if (doc.expires_at > now) return { granted: false, current: leaseFromDoc(doc) };
  const epoch = doc.epoch + 1;
  const res = await c.leases.updateOne(
    { _id: partition, epoch: doc.epoch, expires_at: { $lte: now } },
    { $set: { owner, epoch, expires_at: expiresAt } },
  );
  if (res.modifiedCount === 1) return { granted: true, lease: { partition, owner, epoch, expiresAt } };
  const current = await c.leases.findOne({ _id: partition });
  return { granted: false, current: current ? leaseFromDoc(current) : null };
}
