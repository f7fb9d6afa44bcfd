/**
 * heartbeatMember — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { MemberHeartbeat } from '../../cluster-store';
import { notWritten } from './not-written';

export async function heartbeatMember(
  _db: Db,
  _member: { memberId: string; address?: string | null; instance: string },
  _now: number,
  _ttlMs: number,
): Promise<MemberHeartbeat> {
  throw notWritten('heartbeatMember');
}
