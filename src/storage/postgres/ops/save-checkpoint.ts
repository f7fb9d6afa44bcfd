/**
 * saveCheckpoint — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { CheckpointSaveResult } from '../../checkpoint-store';
import { notWritten } from './not-written';

export async function saveCheckpoint(
  _db: Db,
  _taskId: string,
  _attempt: number,
  _text: string | null,
  _now: number,
): Promise<CheckpointSaveResult> {
  throw notWritten('saveCheckpoint');
}
