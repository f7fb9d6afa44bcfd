/**
 * purgeFinished — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import { notWritten } from './not-written';

export async function purgeFinished(
  _db: Db,
  _before: number,
  _now: number,
  _limit: number,
): Promise<{ tasks: number; idempotencyKeys: number }> {
  throw notWritten('purgeFinished');
}
