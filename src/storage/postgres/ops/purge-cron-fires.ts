/**
 * purgeCronFires — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import { notWritten } from './not-written';

export async function purgeCronFires(_db: Db, _before: number, _limit: number): Promise<number> {
  throw notWritten('purgeCronFires');
}
