/**
 * markPending — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import { notWritten } from './not-written';

export async function markPending(_db: Db, _ids: string[], _now: number, _epoch?: number): Promise<string[]> {
  throw notWritten('markPending');
}
