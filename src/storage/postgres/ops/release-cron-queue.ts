/**
 * releaseQueuedInstances — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { DueEntry } from '../../../domain/task';
import { notWritten } from './not-written';

export async function releaseQueuedInstances(_db: Db, _cronIds: string[], _now: number): Promise<DueEntry[]> {
  throw notWritten('releaseQueuedInstances');
}
