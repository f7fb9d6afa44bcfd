/**
 * heartbeatMember — inputs: {memberId, address?, instance, bus?}, now, ttlMs (epoch ms, ms). Upserts
 * the member with heartbeat_at = now, expires_at = now + ttlMs, the instance token (address and bus
 * replaced; null when not given), as a compare-and-set: an existing row is overwritten only when it is this
 * instance's, has no instance, or has expired (expires_at <= now). Output: `held` with the stored
 * record, or not held with the live row of the other instance. Times are bound as whole ms
 * (../epoch-ms.ts: `now` rounded down, the expiry up).
 * Guarantee: check, write and answer are ONE statement in a transaction of its own: `INSERT … ON
 * CONFLICT DO UPDATE` whose SET keeps every column of a row it may not take (CASE), so the
 * statement always returns the row as it stands under its lock, and the caller holds the id
 * exactly when the returned instance is its own. Of several processes racing for one free or
 * expired member id, exactly one is answered `held`: the others wait on the row lock, then find
 * it live and another instance's. (A refused heartbeat rewrites the row unchanged: refusals only
 * happen to a process configured with a member id another live process holds.)
 */
import { atMs, untilMs } from '../epoch-ms';
import type { Db } from '../db';
import type { MemberBeat, MemberHeartbeat } from '../../cluster-store';
import { MEMBER_COLUMNS, MemberRow, memberFromRow } from '../../sql/cluster-rows';

/** `column` takes the new value when the caller may take the row, else keeps its own. */
const TAKE = (column: string) => `${column} = CASE WHEN ${MAY_TAKE} THEN excluded.${column} ELSE m.${column} END`;
/** The caller's instance holds the row, or nobody does (no instance, or expired at `now` = $3). */
const MAY_TAKE = `(m.instance IS NULL OR m.instance = excluded.instance OR m.expires_at <= $3)`;

export async function heartbeatMember(db: Db, member: MemberBeat, now: number, ttlMs: number): Promise<MemberHeartbeat> {
  const { rows } = await db.query<MemberRow>(
    `INSERT INTO members AS m (member_id, address, heartbeat_at, expires_at, instance, bus) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (member_id) DO UPDATE SET
       ${['address', 'heartbeat_at', 'expires_at', 'instance', 'bus'].map(TAKE).join(',\n       ')}
     RETURNING ${MEMBER_COLUMNS}`,
    [member.memberId, member.address ?? null, atMs(now), untilMs(now + ttlMs), member.instance, member.bus ?? null],
  );
  const row = memberFromRow(rows[0]);
  return row.instance === member.instance ? { held: true, member: row } : { held: false, holder: row };
}
