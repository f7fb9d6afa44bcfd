/**
 * Rows of the cluster tables (`members`, `partition_leases`) as both SQL adapters read them, and
 * their records (cluster-store.ts). Same columns and value shapes in SQLite and PostgreSQL: times
 * in epoch ms, epochs as integers.
 */
import type { MemberRecord, PartitionLease } from '../cluster-store';

/** A `partition_leases` row as read by {@link LEASE_COLUMNS}. */
export interface LeaseRow {
  partition: number;
  owner: string;
  epoch: number;
  expires_at: number;
}

/** The columns of a {@link LeaseRow}, in a SELECT or a RETURNING. */
export const LEASE_COLUMNS = 'partition, owner, epoch, expires_at';

/** The lease record of a row. */
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
  bus: string | null;
}

/** The columns of a {@link MemberRow}, in a SELECT or a RETURNING. */
export const MEMBER_COLUMNS = 'member_id, address, heartbeat_at, expires_at, instance, bus';

/** The member record of a row. */
export function memberFromRow(r: MemberRow): MemberRecord {
  return {
    memberId: r.member_id,
    address: r.address,
    heartbeatAt: r.heartbeat_at,
    expiresAt: r.expires_at,
    instance: r.instance,
    bus: r.bus,
  };
}
