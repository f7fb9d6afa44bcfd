/**
 * loadDue — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { DueEntry } from '../../../domain/task';
import { notWritten } from './not-written';

export async function loadDue(_db: Db, _partition: number, _until: number, _limit: number): Promise<DueEntry[]> {
  throw notWritten('loadDue');
}
