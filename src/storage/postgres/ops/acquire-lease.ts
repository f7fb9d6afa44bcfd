/**
 * acquireLease — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { LeaseGrant } from '../../cluster-store';
import { notWritten } from './not-written';

export async function acquireLease(_db: Db, _partition: number, _owner: string, _now: number, _ttlMs: number): Promise<LeaseGrant> {
  throw notWritten('acquireLease');
}
