/**
 * releaseLease — inputs: partition, owner, epoch. Compare-and-set on (partition, owner, epoch):
 * expires_at = 0, so the partition is free at once; the row (and its epoch) stays, so the next
 * grant continues the epoch. Output: whether the caller still held it.
 * Guarantee: one UPDATE in a transaction of its own; never frees a lease granted to someone else
 * (a newer grant has another epoch).
 */
import type { Db } from '../db';

export async function releaseLease(db: Db, partition: number, owner: string, epoch: number): Promise<boolean> {
  const res = await db.query(`UPDATE partition_leases SET expires_at = 0 WHERE partition = $1 AND owner = $2 AND epoch = $3`, [
    partition,
    owner,
    epoch,
  ]);
  return res.rowCount === 1;
}
