/**
 * heartbeatAttempts, findExpiredLeases — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { AttemptHeartbeat, OrphanedAttempt } from '../../store';
import { notWritten } from './not-written';

export async function heartbeatAttempts(
  _db: Db,
  _items: Array<{ taskId: string; attempt: number }>,
  _until: number,
): Promise<AttemptHeartbeat> {
  throw notWritten('heartbeatAttempts');
}

export async function findExpiredLeases(_db: Db, _now: number, _limit: number): Promise<OrphanedAttempt[]> {
  throw notWritten('findExpiredLeases');
}
