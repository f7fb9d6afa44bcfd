/**
 * heartbeatMember — inputs: {memberId, address?, instance, bus?}, now, ttlMs. Output: `held` with the
 * stored record, or not held with the live document of another instance.
 * 1. `updateOne` of `members/<id>` filtered on "this instance's, or without instance, or expired"
 *    (`expires_at <= now`): heartbeat_at = now, expires_at = now + ttlMs, gc_at = that instant as
 *    a Date (TTL garbage collection where supported; liveness is decided by `expires_at` against
 *    the reader's `now`), instance;
 * 2. nothing matched: `insertOne` (no document yet); a duplicate key means a document exists that
 *    the filter refused: it is read back and returned as the holder (read again once if it was
 *    removed or expired meanwhile: step 1 is then retried).
 * Guarantee: one document per member id; a live document of another instance is never
 * overwritten by a server with atomic single-document updates (MongoDB). FerretDB 1.x applies the
 * filter and the update apart: see ClusterStore.heartbeatMember.
 */
import type { MemberBeat, MemberHeartbeat, MemberRecord } from '../../cluster-store';
import type { MongoCollections } from '../collections';
import { isDuplicateKey } from '../documents';
import { memberFromDoc } from './cluster-reads';

/** Attempts of step 1–2 when the holder vanishes between them. */
const TRIES = 2;

export async function heartbeatMember(c: MongoCollections, member: MemberBeat, now: number, ttlMs: number): Promise<MemberHeartbeat> {
  const address = member.address ?? null;
  const bus = member.bus ?? null;
  const expiresAt = now + ttlMs;
  const fields = { address, heartbeat_at: now, expires_at: expiresAt, gc_at: new Date(expiresAt), instance: member.instance, bus };
  const record: MemberRecord = { memberId: member.memberId, address, heartbeatAt: now, expiresAt, instance: member.instance, bus };
  for (let i = 0; ; i++) {
    const takeable = { _id: member.memberId, $or: [{ instance: member.instance }, { instance: null }, { expires_at: { $lte: now } }] };
    if ((await c.members.updateOne(takeable, { $set: fields })).matchedCount === 1) return { held: true, member: record };
    try {
      await c.members.insertOne({ _id: member.memberId, ...fields });
      return { held: true, member: record };
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    const holder = await c.members.findOne({ _id: member.memberId });
    if (holder && holder.expires_at > now && (holder.instance ?? null) !== null && holder.instance !== member.instance) {
      return { held: false, holder: memberFromDoc(holder) };
    }
    if (i + 1 >= TRIES) throw new Error(`member ${member.memberId}: heartbeat neither updated nor inserted its record`);
  }
}
