/**
 * auditScan — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { AuditScan } from '../../store';
import { notWritten } from './not-written';

export async function auditScan(_db: Db, _now: number, _overdueBefore: number, _limit: number): Promise<AuditScan> {
  throw notWritten('auditScan');
}
