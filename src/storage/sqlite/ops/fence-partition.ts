/**
 * fencePartition — inputs: partition, epoch. Raises owner_epoch to `epoch` on every unfinished
 * task (SCHEDULED, PENDING, RETRYING, BLOCKED, RUNNING) of the partition whose owner_epoch is
 * lower. Output: how many. Guarantee: after it, markPending/claimTasks with an older epoch change
 * none of these tasks. Cluster mode only (a scan of the partition's rows in SQLite; the embedded
 * profile never calls it).
 */
import type Database from 'better-sqlite3';
import { GUARDS } from '../../../domain/state-machine';
import { sqlStates } from '../../sql/state-sql';

export function prepareFencePartition(db: Database.Database): (partition: number, epoch: number) => number {
  const stmt = db.prepare(`
    UPDATE tasks SET owner_epoch = ?
    WHERE partition = ? AND ${sqlStates(GUARDS.fence)} AND owner_epoch < ?`);
  return (partition, epoch) => stmt.run(epoch, partition, epoch).changes;
}
