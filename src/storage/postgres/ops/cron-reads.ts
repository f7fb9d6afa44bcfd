/**
 * getCron, listCrons, loadDueCrons, listCronFires, cronsWithQueuedInstances — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { CronFireView, CronListQuery } from '../../cron-store';
import type { CronRecord } from '../../../domain/cron/cron-definition';
import { notWritten } from './not-written';

export async function getCron(_db: Db, _id: string): Promise<CronRecord | null> {
  throw notWritten('getCron');
}

export async function listCrons(_db: Db, _query: CronListQuery): Promise<{ crons: CronRecord[]; nextCursor: string | null }> {
  throw notWritten('listCrons');
}

export async function loadDueCrons(_db: Db, _until: number, _limit: number): Promise<CronRecord[]> {
  throw notWritten('loadDueCrons');
}

export async function listCronFires(
  _db: Db,
  _cronId: string,
  _query: { limit: number; cursor?: string },
): Promise<{ fires: CronFireView[]; nextCursor: string | null }> {
  throw notWritten('listCronFires');
}

export async function cronsWithQueuedInstances(_db: Db, _limit: number): Promise<string[]> {
  throw notWritten('cronsWithQueuedInstances');
}
