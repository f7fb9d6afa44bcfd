/**
 * putConcurrencyLimit, listConcurrencyLimits — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { ConcurrencyLimitRecord } from '../../concurrency-store';
import { notWritten } from './not-written';

export async function putConcurrencyLimit(_db: Db, _key: string, _maxRunning: number | null, _now: number): Promise<void> {
  throw notWritten('putConcurrencyLimit');
}

export async function listConcurrencyLimits(_db: Db): Promise<ConcurrencyLimitRecord[]> {
  throw notWritten('listConcurrencyLimits');
}
