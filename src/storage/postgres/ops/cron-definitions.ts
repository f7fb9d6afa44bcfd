/**
 * createCron, updateCron, deleteCron — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { CronChanges } from '../../cron-store';
import type { CronRecord } from '../../../domain/cron/cron-definition';
import { notWritten } from './not-written';

export async function createCron(_db: Db, _cron: CronRecord): Promise<void> {
  throw notWritten('createCron');
}

export async function updateCron(_db: Db, _id: string, _changes: CronChanges, _now: number): Promise<CronRecord | null> {
  throw notWritten('updateCron');
}

export async function deleteCron(_db: Db, _id: string): Promise<boolean> {
  throw notWritten('deleteCron');
}
