/**
 * heartbeatMember — inputs: {memberId, address?}, now, ttlMs. Upserts the member with
 * heartbeat_at = now and expires_at = now + ttlMs (address replaced; null when not given).
 * Output: the stored record. Guarantee: one row per member id.
 */
import type Database from 'better-sqlite3';
import { MemberRecord } from '../../cluster-store';

export function prepareHeartbeatMember(
  db: Database.Database,
): (member: { memberId: string; address?: string | null }, now: number, ttlMs: number) => MemberRecord {
  const stmt = db.prepare(`
    INSERT INTO members (member_id, address, heartbeat_at, expires_at) VALUES (?, ?, ?, ?)
    ON CONFLICT (member_id) DO UPDATE SET address = excluded.address, heartbeat_at = excluded.heartbeat_at,
      expires_at = excluded.expires_at`);
  return (member, now, ttlMs) => {
    const address = member.address ?? null;
    stmt.run(member.memberId, address, now, now + ttlMs);
    return { memberId: member.memberId, address, heartbeatAt: now, expiresAt: now + ttlMs };
  };
}
