/**
 * Cluster reads (read-only). listLiveMembers — input: now; output: members with expires_at > now,
 * by id. listLeases — output: every lease row (held, expired or released), by partition.
 */
import type Database from 'better-sqlite3';
import { MemberRecord, PartitionLease } from '../../cluster-store';
import { LEASE_COLUMNS, LeaseRow, leaseFromRow, MEMBER_COLUMNS, MemberRow, memberFromRow } from '../../sql/cluster-rows';

export function prepareClusterReads(db: Database.Database) {
  const members = db.prepare(`SELECT ${MEMBER_COLUMNS} FROM members WHERE expires_at > ? ORDER BY member_id`);
  const leases = db.prepare(`SELECT ${LEASE_COLUMNS} FROM partition_leases ORDER BY partition`);
  return {
    listLiveMembers(now: number): MemberRecord[] {
      return (members.all(now) as MemberRow[]).map(memberFromRow);
    },
    listLeases(): PartitionLease[] {
      return (leases.all() as LeaseRow[]).map(leaseFromRow);
    },
  };
}
