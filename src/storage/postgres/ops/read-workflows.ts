/**
 * getWorkflow, getWorkflowTasks, listWorkflows — NOT YET WRITTEN (stub of the PostgreSQL store's skeleton).
 * Header to write: inputs, outputs, guarantee (see src/storage/sqlite/ops/ for the SQLite version).
 */
import type { Db } from '../db';
import type { WorkflowListQuery, WorkflowPage } from '../../store';
import type { WorkflowRecord, WorkflowTaskSummary } from '../../../domain/workflow';
import { notWritten } from './not-written';

export async function getWorkflow(_db: Db, _id: string): Promise<WorkflowRecord | null> {
  throw notWritten('getWorkflow');
}

export async function getWorkflowTasks(_db: Db, _id: string): Promise<WorkflowTaskSummary[]> {
  throw notWritten('getWorkflowTasks');
}

export async function listWorkflows(_db: Db, _query: WorkflowListQuery): Promise<WorkflowPage> {
  throw notWritten('listWorkflows');
}
