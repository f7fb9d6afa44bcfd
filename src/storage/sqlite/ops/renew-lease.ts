/**
 * renewLease — inputs: partition, owner, epoch, now, ttlMs. Compare-and-set on (partition, owner,
 * epoch) and expires_at > now: expires_at = max(expires_at, now + ttlMs). Output: the lease after
 * the renewal, or null when it was lost (expired, released, or granted anew: another epoch).
 * Guarantee: never extends a lease someone else holds; never shortens one.
 */
import type Database from 'better-sqlite3';
import { PartitionLease } from '../../cluster-store';

export function prepareRenewLease(
  db: Database.Database,
): (partition: number, owner: string, epoch: number, now: number, ttlMs: number) => PartitionLease | null {
  const stmt = db
    .prepare(
      `
    UPDATE partition_leases SET expires_at = MAX(expires_at, ?)
    WHERE partition = ? AND owner = ? AND epoch = ? AND expires_at > ?
    RETURNING expires_at`,
    )
    .pluck();
  return (partition, owner, epoch, now, ttlMs) => {
    const expiresAt = stmt.get(now + ttlMs, partition, owner, epoch, now) as number | undefined;
    return expiresAt === undefined ? null : { partition, owner, epoch, expiresAt };
  };
}
