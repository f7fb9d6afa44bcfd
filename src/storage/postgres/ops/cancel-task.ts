/**
 * cancelTask — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { CancelResult } from '../../store';
import { notWritten } from './not-written';

export async function cancelTask(_db: Db, _id: string, _now: number): Promise<CancelResult> {
  throw notWritten('cancelTask');
}
