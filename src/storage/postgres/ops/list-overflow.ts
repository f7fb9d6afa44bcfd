/**
 * listOverflow — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { HeldTask } from '../../../domain/overflow-policy';
import { notWritten } from './not-written';

export async function listOverflow(_db: Db, _limit: number, _excludeTenants?: readonly string[]): Promise<HeldTask[]> {
  throw notWritten('listOverflow');
}
