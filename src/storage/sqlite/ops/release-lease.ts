/**
 * releaseLease — inputs: partition, owner, epoch. Compare-and-set on (partition, owner, epoch):
 * expires_at = 0, so the partition is free at once; the row (and its epoch) stays. Output: whether
 * the caller still held it. Guarantee: never frees a lease granted to someone else.
 */
import type Database from 'better-sqlite3';

export function prepareReleaseLease(db: Database.Database): (partition: number, owner: string, epoch: number) => boolean {
  const stmt = db.prepare(`UPDATE partition_leases SET expires_at = 0 WHERE partition = ? AND owner = ? AND epoch = ?`);
  return (partition, owner, epoch) => stmt.run(partition, owner, epoch).changes === 1;
}
