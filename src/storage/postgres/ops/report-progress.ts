/**
 * reportProgress — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import { notWritten } from './not-written';

export async function reportProgress(
  _db: Db,
  _rows: Array<{ taskId: string; attempt: number; text: string }>,
  _now: number,
): Promise<number> {
  throw notWritten('reportProgress');
}
