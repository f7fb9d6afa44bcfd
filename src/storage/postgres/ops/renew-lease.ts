/**
 * renewLease — inputs: partition, owner, epoch, now, ttlMs (epoch ms, ms). Compare-and-set on
 * (partition, owner, epoch) and expires_at > now: expires_at = greatest(expires_at, now + ttlMs).
 * Output: the lease after the renewal, or null when it was lost (expired, released, or granted
 * anew: another epoch). Times are bound as whole ms (../epoch-ms.ts: `now` down, the expiry up).
 * Guarantee: one UPDATE in a transaction of its own; it never extends a lease someone else holds
 * (a concurrent grant either committed first, so the epoch no longer matches, or waits for this
 * renewal and then finds the lease not expired) and never shortens one.
 */
import { atMs, untilMs } from '../epoch-ms';
import type { Db } from '../db';
import type { PartitionLease } from '../../cluster-store';

export async function renewLease(
  db: Db,
  partition: number,
  owner: string,
  epoch: number,
  now: number,
  ttlMs: number,
): Promise<PartitionLease | null> {
  const { rows } = await db.query<{ expires_at: number }>(
    `UPDATE partition_leases SET expires_at = GREATEST(expires_at, $1)
     WHERE partition = $2 AND owner = $3 AND epoch = $4 AND expires_at > $5
     RETURNING expires_at`,
    [untilMs(now + ttlMs), partition, owner, epoch, atMs(now)],
  );
  return rows.length === 1 ? { partition, owner, epoch, expiresAt: rows[0].expires_at } : null;
}
