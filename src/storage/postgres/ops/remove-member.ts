/**
 * removeMember — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import { notWritten } from './not-written';

export async function removeMember(_db: Db, _memberId: string, _instance?: string): Promise<boolean> {
  throw notWritten('removeMember');
}
