/**
 * insertTasks — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { InsertResult } from '../../store';
import type { NewTask } from '../../../domain/task';
import { notWritten } from './not-written';

export async function insertTasks(_db: Db, _tasks: NewTask[]): Promise<InsertResult[]> {
  throw notWritten('insertTasks');
}
