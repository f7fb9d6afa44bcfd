/**
 * updateWaitingTask — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { UpdateWaitingChanges, UpdateWaitingResult } from '../../store';
import { notWritten } from './not-written';

export async function updateWaitingTask(_db: Db, _id: string, _changes: UpdateWaitingChanges, _now: number): Promise<UpdateWaitingResult> {
  throw notWritten('updateWaitingTask');
}
