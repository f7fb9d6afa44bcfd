/**
 * listLiveMembers, listLeases — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { MemberRecord, PartitionLease } from '../../cluster-store';
import { notWritten } from './not-written';

export async function listLiveMembers(_db: Db, _now: number): Promise<MemberRecord[]> {
  throw notWritten('listLiveMembers');
}

export async function listLeases(_db: Db): Promise<PartitionLease[]> {
  throw notWritten('listLeases');
}
