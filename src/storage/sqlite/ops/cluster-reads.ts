/**
 * Cluster reads (read-only). listLiveMembers — input: now; output: members with expires_at > now,
 * by id. listLeases — output: every lease row (held, expired or released), by partition.
 */
import type Database from 'better-sqlite3';
import { MemberRecord, PartitionLease } from '../../cluster-store';

export interface LeaseRow {
  partition: number;
  owner: string;
  epoch: number;
  expires_at: number;
}

export function leaseFromRow(r: LeaseRow): PartitionLease {
  return { partition: r.partition, owner: r.owner, epoch: r.epoch, expiresAt: r.expires_at };
}

/** A `members` row as read by {@link MEMBER_COLUMNS}. */
export interface MemberRow {
  member_id: string;
  address: string | null;
  heartbeat_at: number;
  expires_at: number;
  instance: string | null;
}

export const MEMBER_COLUMNS = 'member_id, address, heartbeat_at, expires_at, instance';

export function memberFromRow(r: MemberRow): MemberRecord {
  return { memberId: r.member_id, address: r.address, heartbeatAt: r.heartbeat_at, expiresAt: r.expires_at, instance: r.instance };
}

export function prepareClusterReads(db: Database.Database) {
  const members = db.prepare(`SELECT ${MEMBER_COLUMNS} FROM members WHERE expires_at > ? ORDER BY member_id`);
  const leases = db.prepare(`SELECT partition, owner, epoch, expires_at FROM partition_leases ORDER BY partition`);
  return {
    listLiveMembers(now: number): MemberRecord[] {
      return (members.all(now) as MemberRow[]).map(memberFromRow);
    },
    listLeases(): PartitionLease[] {
      return (leases.all() as LeaseRow[]).map(leaseFromRow);
    },
  };
}
