/**
 * fencePartition — inputs: partition, epoch. Raises owner_epoch to `epoch` on every unfinished
 * task (SCHEDULED, PENDING, RETRYING, BLOCKED, RUNNING: GUARDS.fence) of the partition whose
 * owner_epoch is lower. Output: how many tasks were raised.
 * Guarantee: one UPDATE in the write queue's transaction; its caller is answered after the commit,
 * and from then on markPending/claimTasks with an older epoch change none of these tasks. The rows
 * are locked in id order (SELECT … ORDER BY id FOR UPDATE) as the other set-based task writes lock
 * them, so a stale owner's concurrent claim of the same rows waits instead of deadlocking; a row
 * a concurrent writer changed is re-checked on its new version (READ COMMITTED), and an epoch is
 * never lowered.
 */
import type { Db } from '../db';
import { GUARDS } from '../../../domain/state-machine';
import { sqlIndexedStates } from '../indexed-states';

/** GUARDS.fence as the partial indexes find it (indexed-states.ts): no read of the finished tasks. */
const FENCED = sqlIndexedStates(GUARDS.fence);

export async function fencePartition(db: Db, partition: number, epoch: number): Promise<number> {
  const res = await db.query(
    `UPDATE tasks SET owner_epoch = $1
     WHERE id IN (
       SELECT id FROM tasks WHERE partition = $2 AND ${FENCED} AND owner_epoch < $1
       ORDER BY id FOR UPDATE)
     AND owner_epoch < $1`,
    [epoch, partition],
  );
  return res.rowCount ?? 0;
}
