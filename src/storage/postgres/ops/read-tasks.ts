/**
 * getTask, getAttempts, listTasks, findOrphanedAttempts, countByState — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { AttemptRecord, TaskRecord, TaskState } from '../../../domain/task';
import type { OrphanedAttempt, TaskListQuery, TaskPage } from '../../store';
import { notWritten } from './not-written';

export async function getTask(_db: Db, _id: string): Promise<TaskRecord | null> {
  throw notWritten('getTask');
}

export async function getAttempts(_db: Db, _id: string): Promise<AttemptRecord[]> {
  throw notWritten('getAttempts');
}

export async function listTasks(_db: Db, _query: TaskListQuery): Promise<TaskPage> {
  throw notWritten('listTasks');
}

export async function findOrphanedAttempts(_db: Db, _limit: number): Promise<OrphanedAttempt[]> {
  throw notWritten('findOrphanedAttempts');
}

export async function countByState(_db: Db): Promise<Record<TaskState, number>> {
  throw notWritten('countByState');
}
