/**
 * putTenantSettings, listTenantSettings, putTaskTypeLimit, listTaskTypeLimits, countWaitingByTenant — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { RateLimit } from '../../../domain/dispatch-limits';
import type { TenantSettings } from '../../tenant-store';
import { notWritten } from './not-written';

export async function putTenantSettings(_db: Db, _settings: TenantSettings): Promise<void> {
  throw notWritten('putTenantSettings');
}

export async function listTenantSettings(_db: Db): Promise<TenantSettings[]> {
  throw notWritten('listTenantSettings');
}

export async function putTaskTypeLimit(_db: Db, _taskType: string, _limit: RateLimit | null, _now: number): Promise<void> {
  throw notWritten('putTaskTypeLimit');
}

export async function listTaskTypeLimits(_db: Db): Promise<Array<{ taskType: string; limit: RateLimit }>> {
  throw notWritten('listTaskTypeLimits');
}

export async function countWaitingByTenant(_db: Db): Promise<Record<string, number>> {
  throw notWritten('countWaitingByTenant');
}
