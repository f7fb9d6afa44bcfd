/**
 * claimTasks — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { ClaimedTask } from '../../../domain/task';
import { notWritten } from './not-written';

export async function claimTasks(
  _db: Db,
  _ids: string[],
  _workerId: string,
  _now: number,
  _leaseMs: number,
  _epochs?: readonly number[],
  _seqs?: readonly number[],
): Promise<ClaimedTask[]> {
  throw notWritten('claimTasks');
}
