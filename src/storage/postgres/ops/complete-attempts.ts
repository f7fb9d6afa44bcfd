/**
 * completeAttempts — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { AttemptCompletion, CompletionResult } from '../../store';
import { notWritten } from './not-written';

export async function completeAttempts(_db: Db, _completions: AttemptCompletion[], _now: number): Promise<CompletionResult[]> {
  throw notWritten('completeAttempts');
}
