/**
 * The reads of the SQLite store, prepared together on the caller's connection when the store opens
 * (writes go through the writer, write-ops.ts; scans that grow with the table through the
 * aggregate reader). One bundle, so that the facade holds one handle instead of one per group.
 */
import type Database from 'better-sqlite3';
import { prepareClusterReads } from './ops/cluster-reads';
import { prepareConcurrencyLimitReads } from './ops/concurrency-limits';
import { prepareCountOverflow } from './ops/count-overflow';
import { CronReads, prepareCronReads } from './ops/cron-reads';
import { prepareFindExpiredLeases } from './ops/leases';
import { prepareListOverflow } from './ops/list-overflow';
import { prepareReads, TaskReads } from './ops/read-tasks';
import { prepareWorkflowReads, WorkflowReads } from './ops/read-workflows';
import { prepareTenantReads } from './ops/tenant-settings';
import { prepareGetAttemptLog } from './ops/read-attempt-log';
import { prepareGetTaskStates } from './ops/read-task-states';
import { prepareGetIdempotencyKeys } from './ops/read-idempotency-keys';

export interface ReadStatements {
  tasks: TaskReads;
  findExpiredLeases: ReturnType<typeof prepareFindExpiredLeases>;
  crons: CronReads;
  tenants: ReturnType<typeof prepareTenantReads>;
  concurrency: ReturnType<typeof prepareConcurrencyLimitReads>;
  workflows: WorkflowReads;
  cluster: ReturnType<typeof prepareClusterReads>;
  listOverflow: ReturnType<typeof prepareListOverflow>;
  countOverflow: ReturnType<typeof prepareCountOverflow>;
  attemptLog: ReturnType<typeof prepareGetAttemptLog>;
  taskStates: ReturnType<typeof prepareGetTaskStates>;
  idempotencyKeys: ReturnType<typeof prepareGetIdempotencyKeys>;
}

/** Prepares every read statement on `db` (an open, migrated connection). */
export function prepareReadStatements(db: Database.Database): ReadStatements {
  return {
    tasks: prepareReads(db),
    findExpiredLeases: prepareFindExpiredLeases(db),
    crons: prepareCronReads(db),
    tenants: prepareTenantReads(db),
    concurrency: prepareConcurrencyLimitReads(db),
    workflows: prepareWorkflowReads(db),
    cluster: prepareClusterReads(db),
    listOverflow: prepareListOverflow(db),
    countOverflow: prepareCountOverflow(db),
    attemptLog: prepareGetAttemptLog(db),
    taskStates: prepareGetTaskStates(db),
    idempotencyKeys: prepareGetIdempotencyKeys(db),
  };
}
