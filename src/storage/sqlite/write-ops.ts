import type Database from 'better-sqlite3';
import { prepareCancelTask } from './ops/cancel-task';
import { prepareClaimTasks } from './ops/claim-tasks';
import { prepareCompleteAttempts } from './ops/complete-attempts';
import { prepareInsertTasks } from './ops/insert-tasks';
import { prepareMarkPending } from './ops/mark-pending';
import { preparePurgeFinished } from './ops/purge-finished';
import { prepareDeleteDead, prepareReplayDead } from './ops/dead-letter';
import { prepareUpdateWaitingTask } from './ops/update-waiting-task';
import { prepareHeartbeatAttempts } from './ops/leases';
import { prepareCreateCron, prepareDeleteCron, prepareUpdateCron } from './ops/cron-definitions';
import { prepareFireCrons } from './ops/fire-crons';
import { prepareReleaseQueuedInstances } from './ops/release-cron-queue';
import { preparePurgeCronFires } from './ops/purge-cron-fires';
import { prepareTenantWrites } from './ops/tenant-settings';
import { prepareDeleteTenantSettings } from './ops/delete-tenant-settings';
import { prepareInsertWorkflow } from './ops/insert-workflow';
import { prepareCancelWorkflow } from './ops/cancel-workflow';
import { prepareHeartbeatMember } from './ops/heartbeat-member';
import { prepareRemoveMember } from './ops/remove-member';
import { prepareAcquireLease } from './ops/acquire-lease';
import { prepareRenewLease } from './ops/renew-lease';
import { prepareReleaseLease } from './ops/release-lease';
import { prepareFencePartition } from './ops/fence-partition';
import { prepareReleaseOverflow } from './ops/release-overflow';
import { prepareConcurrencyLimitWrites } from './ops/concurrency-limits';
import { prepareSaveCheckpoint } from './ops/save-checkpoint';
import { prepareReportProgress } from './ops/report-progress';
import { prepareAppendAttemptLogs } from './ops/append-attempt-logs';
import { prepareProbeWrite } from './ops/probe-write';
import { prepareClaimTasksAhead } from './ops/claim-tasks-ahead';

/** Prepares every write operation of `ops/` on one connection. */
export function prepareWriteOps(db: Database.Database) {
  const tenants = prepareTenantWrites(db);
  return {
    putTenantSettings: tenants.putTenantSettings,
    putTaskTypeLimit: tenants.putTaskTypeLimit,
    deleteTenantSettings: prepareDeleteTenantSettings(db),
    putConcurrencyLimit: prepareConcurrencyLimitWrites(db).putConcurrencyLimit,
    insertTasks: prepareInsertTasks(db),
    markPending: prepareMarkPending(db),
    claimTasks: prepareClaimTasks(db),
    claimTasksAhead: prepareClaimTasksAhead(db),
    completeAttempts: prepareCompleteAttempts(db),
    cancelTask: prepareCancelTask(db),
    replayDead: prepareReplayDead(db),
    updateWaitingTask: prepareUpdateWaitingTask(db),
    heartbeatAttempts: prepareHeartbeatAttempts(db),
    deleteDead: prepareDeleteDead(db),
    purgeFinished: preparePurgeFinished(db),
    createCron: prepareCreateCron(db),
    updateCron: prepareUpdateCron(db),
    deleteCron: prepareDeleteCron(db),
    fireCrons: prepareFireCrons(db),
    releaseQueuedInstances: prepareReleaseQueuedInstances(db),
    purgeCronFires: preparePurgeCronFires(db),
    insertWorkflow: prepareInsertWorkflow(db),
    cancelWorkflow: prepareCancelWorkflow(db),
    heartbeatMember: prepareHeartbeatMember(db),
    removeMember: prepareRemoveMember(db),
    acquireLease: prepareAcquireLease(db),
    renewLease: prepareRenewLease(db),
    releaseLease: prepareReleaseLease(db),
    fencePartition: prepareFencePartition(db),
    releaseOverflow: prepareReleaseOverflow(db),
    saveCheckpoint: prepareSaveCheckpoint(db),
    reportProgress: prepareReportProgress(db),
    appendAttemptLogs: prepareAppendAttemptLogs(db),
    probeWrite: prepareProbeWrite(db),
  };
}

export type WriteOps = ReturnType<typeof prepareWriteOps>;
export type WriteOpName = keyof WriteOps;

/**
 * How many rows a write operation writes, for the group commit's lanes: the tasks of a batch
 * submission or of a workflow, the ids of a due mark; 1 for every other operation (claims and
 * completions are bounded by worker credits and stay in the lane of small operations; so do progress
 * reports, one batch per worker and second, which keep their order with the completions after them).
 */
export function rowsOf(op: WriteOpName, args: readonly unknown[]): number {
  if (op === 'insertTasks') return (args[0] as unknown[]).length;
  if (op === 'insertWorkflow') return (args[0] as { tasks: unknown[] }).tasks.length;
  if (op === 'markPending') return (args[0] as unknown[]).length;
  if (op === 'releaseOverflow') return (args[0] as unknown[]).length;
  if (op === 'claimTasksAhead') return (args[0] as unknown[]).length;
  return 1;
}

/**
 * True for the operations of the group commit's deferred lane: due marks (SCHEDULED/RETRYING →
 * PENDING) of tasks still waiting at the dispatcher after a delay. A claim takes a due task
 * without its mark (claimTasks accepts a due SCHEDULED or RETRYING task), so claims, which hold
 * worker slots, and submissions do not wait behind the marks of a large backlog; a mark that comes
 * after its task's claim changes nothing.
 */
export function isDeferred(op: WriteOpName): boolean {
  return op === 'markPending';
}

/** What {@link Writer.stats} answers. */
export interface WriterStats {
  commits: number;
  operations: number;
  largestBatch: number;
  newSpaceBytes: number;
}

/** Runs write operations in group-commit transactions and answers after the commit. */
export interface Writer {
  run<K extends WriteOpName>(op: K, args: Parameters<WriteOps[K]>): Promise<ReturnType<WriteOps[K]>>;
  /** Commits what is queued, then stops. */
  close(): Promise<void>;
  /**
   * Transactions committed, operations in them and the largest batch; `newSpaceBytes`: the size of
   * V8's new space (young generation) of the isolate the writes run on (bytes).
   */
  stats(): Promise<WriterStats>;
}
