/**
 * insertWorkflow — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { NewWorkflow } from '../../../domain/workflow';
import { notWritten } from './not-written';

export async function insertWorkflow(_db: Db, _workflow: NewWorkflow): Promise<number[]> {
  throw notWritten('insertWorkflow');
}
