/**
 * acquireLease — inputs: partition, owner, now, ttlMs. Grants the partition's lease to `owner`
 * until now + ttlMs with epoch = previous epoch + 1 (1 for a partition never leased), only when
 * it is free: no row, or expires_at <= now (expired or released). Output: the grant, or the
 * lease in force. Guarantee: compare-and-set inside the writer's transaction (one writer per
 * file), so two callers never both get the same partition and epoch; epochs only grow (rows are
 * never deleted).
 */
import type Database from 'better-sqlite3';
import { LeaseGrant, PartitionLease } from '../../cluster-store';
import { leaseFromRow, LeaseRow } from '../../sql/cluster-rows';

export function prepareAcquireLease(db: Database.Database): (partition: number, owner: string, now: number, ttlMs: number) => LeaseGrant {
  const read = db.prepare(`SELECT partition, owner, epoch, expires_at FROM partition_leases WHERE partition = ?`);
  const insert = db.prepare(`INSERT INTO partition_leases (partition, owner, epoch, expires_at) VALUES (?, ?, 1, ?)`);
  const take = db.prepare(`
    UPDATE partition_leases SET owner = ?, epoch = epoch + 1, expires_at = ?
    WHERE partition = ? AND epoch = ? AND expires_at <= ?`);
  return (partition, owner, now, ttlMs) => {
    const row = read.get(partition) as LeaseRow | undefined;
    const expiresAt = now + ttlMs;
    if (!row) {
      insert.run(partition, owner, expiresAt);
      return { granted: true, lease: { partition, owner, epoch: 1, expiresAt } };
    }
    const current: PartitionLease = leaseFromRow(row);
    if (current.expiresAt > now || take.run(owner, expiresAt, partition, current.epoch, now).changes !== 1) {
      return { granted: false, current };
    }
    return { granted: true, lease: { partition, owner, epoch: current.epoch + 1, expiresAt } };
  };
}
