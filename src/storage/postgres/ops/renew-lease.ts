/**
 * renewLease — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { PartitionLease } from '../../cluster-store';
import { notWritten } from './not-written';

export async function renewLease(
  _db: Db,
  _partition: number,
  _owner: string,
  _epoch: number,
  _now: number,
  _ttlMs: number,
): Promise<PartitionLease | null> {
  throw notWritten('renewLease');
}
