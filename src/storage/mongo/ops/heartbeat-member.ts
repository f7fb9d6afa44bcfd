/**
 * heartbeatMember — inputs: {memberId, address?}, now, ttlMs. One upsert of `members/<id>`:
 * heartbeat_at = now, expires_at = now + ttlMs, gc_at = that instant as a Date (TTL garbage
 * collection where supported; liveness is decided by `expires_at` against the reader's `now`).
 * Output: the stored record. Guarantee: one document per member id.
 */
import { MemberRecord } from '../../cluster-store';
import type { MongoCollections } from '../collections';

export async function heartbeatMember(
  c: MongoCollections,
  member: { memberId: string; address?: string | null },
  now: number,
  ttlMs: number,
): Promise<MemberRecord> {
  const address = member.address ?? null;
  const expiresAt = now + ttlMs;
  await c.members.updateOne(
    { _id: member.memberId },
    { $set: { address, heartbeat_at: now, expires_at: expiresAt, gc_at: new Date(expiresAt) } },
    { upsert: true },
  );
  return { memberId: member.memberId, address, heartbeatAt: now, expiresAt };
}
