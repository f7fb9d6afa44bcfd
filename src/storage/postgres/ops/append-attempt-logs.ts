/**
 * appendAttemptLogs — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { AttemptLogAppend } from '../../../domain/attempt-log';
import { notWritten } from './not-written';

export async function appendAttemptLogs(_db: Db, _logs: AttemptLogAppend[]): Promise<number> {
  throw notWritten('appendAttemptLogs');
}
