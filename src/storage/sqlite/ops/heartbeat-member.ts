/**
 * heartbeatMember — inputs: {memberId, address?, instance, bus?}, now, ttlMs. Upserts the member
 * with heartbeat_at = now, expires_at = now + ttlMs, the instance token (address and bus replaced;
 * null when not given), as a compare-and-set: an existing row is overwritten only when it is this
 * instance's, has no instance, or has expired (expires_at <= now). Output: `held` with the stored
 * record, or not held with the live row of the other instance. Guarantee: one row per member id;
 * the check and the write are one statement inside the writer's transaction.
 */
import type Database from 'better-sqlite3';
import type { MemberBeat, MemberHeartbeat } from '../../cluster-store';
import { MEMBER_COLUMNS, MemberRow, memberFromRow } from '../../sql/cluster-rows';

export function prepareHeartbeatMember(db: Database.Database): (member: MemberBeat, now: number, ttlMs: number) => MemberHeartbeat {
  const upsert = db.prepare(`
    INSERT INTO members (member_id, address, heartbeat_at, expires_at, instance, bus) VALUES (@id, @address, @now, @expires, @instance, @bus)
    ON CONFLICT (member_id) DO UPDATE SET address = excluded.address, heartbeat_at = excluded.heartbeat_at,
      expires_at = excluded.expires_at, instance = excluded.instance, bus = excluded.bus
    WHERE members.instance IS NULL OR members.instance = excluded.instance OR members.expires_at <= @now`);
  const read = db.prepare(`SELECT ${MEMBER_COLUMNS} FROM members WHERE member_id = ?`);
  return (member, now, ttlMs) => {
    const address = member.address ?? null;
    const bus = member.bus ?? null;
    const row = { id: member.memberId, address, now, expires: now + ttlMs, instance: member.instance, bus };
    if (upsert.run(row).changes === 1) {
      return {
        held: true,
        member: { memberId: member.memberId, address, heartbeatAt: now, expiresAt: now + ttlMs, instance: member.instance, bus },
      };
    }
    return { held: false, holder: memberFromRow(read.get(member.memberId) as MemberRow) };
  };
}
