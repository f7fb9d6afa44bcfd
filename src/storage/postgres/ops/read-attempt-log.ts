/**
 * getAttemptLog — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { AttemptLog } from '../../../domain/attempt-log';
import { notWritten } from './not-written';

export async function getAttemptLog(_db: Db, _taskId: string, _attempt: number): Promise<AttemptLog> {
  throw notWritten('getAttemptLog');
}
