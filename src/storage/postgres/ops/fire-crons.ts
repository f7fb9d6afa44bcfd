/**
 * fireCrons — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { CronFiring, CronFiringResult } from '../../cron-store';
import { notWritten } from './not-written';

export async function fireCrons(_db: Db, _firings: CronFiring[], _now: number): Promise<CronFiringResult[]> {
  throw notWritten('fireCrons');
}
