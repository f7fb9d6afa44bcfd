/**
 * cancelWorkflow — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { WorkflowCancelResult } from '../../store';
import { notWritten } from './not-written';

export async function cancelWorkflow(_db: Db, _id: string, _now: number): Promise<WorkflowCancelResult> {
  throw notWritten('cancelWorkflow');
}
