/**
 * acquireLease — inputs: partition, owner, now, ttlMs (epoch ms, ms). Grants the partition's lease
 * to `owner` until now + ttlMs with epoch = previous epoch + 1 (1 for a partition never leased),
 * only when it is free: no row, or expires_at <= now (expired or released). Output: the grant, or
 * the lease in force (read right after the refusal; null if none can be read). Times are bound
 * as whole ms (../epoch-ms.ts: `now` rounded down, the expiry up).
 * Guarantee: the grant is ONE statement, `INSERT … ON CONFLICT (partition) DO UPDATE … WHERE
 * expires_at <= now RETURNING`, run in a transaction of its own (autocommit on the pool). Callers
 * racing on one partition from several nodes are serialised by the row (or by the primary key for
 * a first insert): the loser waits, then finds the winner's row not expired and writes nothing.
 * So one epoch is granted once, and epochs only grow (rows are never deleted).
 */
import { atMs, untilMs } from '../epoch-ms';
import type { Db } from '../db';
import type { LeaseGrant } from '../../cluster-store';
import { LEASE_COLUMNS, LeaseRow, leaseFromRow } from '../../sql/cluster-rows';

export async function acquireLease(db: Db, partition: number, owner: string, now: number, ttlMs: number): Promise<LeaseGrant> {
  const granted = await db.query<LeaseRow>(
    `INSERT INTO partition_leases AS l (partition, owner, epoch, expires_at) VALUES ($1, $2, 1, $3)
     ON CONFLICT (partition) DO UPDATE SET owner = excluded.owner, epoch = l.epoch + 1, expires_at = excluded.expires_at
     WHERE l.expires_at <= $4
     RETURNING ${LEASE_COLUMNS}`,
    [partition, owner, untilMs(now + ttlMs), atMs(now)],
  );
  if (granted.rows.length === 1) return { granted: true, lease: leaseFromRow(granted.rows[0]) };
  // Refused: who holds it is informational only (nothing is decided on it).
  const current = await db.query<LeaseRow>(`SELECT ${LEASE_COLUMNS} FROM partition_leases WHERE partition = $1`, [partition]);
  return { granted: false, current: current.rows.length === 1 ? leaseFromRow(current.rows[0]) : null };
}
