/**
 * replayDead, deleteDead — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { DueEntry } from '../../../domain/task';
import { notWritten } from './not-written';

export async function replayDead(_db: Db, _id: string, _now: number): Promise<DueEntry | null> {
  throw notWritten('replayDead');
}

export async function deleteDead(_db: Db, _id: string): Promise<boolean> {
  throw notWritten('deleteDead');
}
