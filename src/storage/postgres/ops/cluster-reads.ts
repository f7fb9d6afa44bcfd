/**
 * Cluster reads (read-only, one statement each on the pool). listLiveMembers — input: now (epoch
 * ms); output: members with expires_at > now, by member id. listLeases — output: every lease row
 * (held, expired or released: a row is never deleted), by partition.
 * Guarantee: each is one statement, so it reads one snapshot of its table. `now` is bound rounded
 * down to a whole ms (../epoch-ms.ts: the same members are live).
 */
import { atMs } from '../epoch-ms';
import type { Db } from '../db';
import type { MemberRecord, PartitionLease } from '../../cluster-store';
import { LEASE_COLUMNS, LeaseRow, leaseFromRow, MEMBER_COLUMNS, MemberRow, memberFromRow } from '../../sql/cluster-rows';

/** Members live at `now` (`expires_at > now`), ordered by member id. */
export async function listLiveMembers(db: Db, now: number): Promise<MemberRecord[]> {
  const { rows } = await db.query<MemberRow>(`SELECT ${MEMBER_COLUMNS} FROM members WHERE expires_at > $1 ORDER BY member_id`, [atMs(now)]);
  return rows.map(memberFromRow);
}

/** Every lease record, ordered by partition. */
export async function listLeases(db: Db): Promise<PartitionLease[]> {
  const { rows } = await db.query<LeaseRow>(`SELECT ${LEASE_COLUMNS} FROM partition_leases ORDER BY partition`);
  return rows.map(leaseFromRow);
}
