/**
 * countOverflowByTenant — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import { notWritten } from './not-written';

export async function countOverflowByTenant(_db: Db): Promise<Record<string, number>> {
  throw notWritten('countOverflowByTenant');
}
