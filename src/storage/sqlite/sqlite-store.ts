import { AttemptRecord, ClaimedTask, DueEntry, NewTask, TaskRecord, TaskState } from '../../domain/task';
import {
  AttemptHeartbeat,
  AuditScan,
  InsertResult,
  AttemptCompletion,
  CancelResult,
  CompletionResult,
  HeldIdempotencyKey,
  OrphanedAttempt,
  OrphanSearch,
  SchemaChange,
  Store,
  TaskListQuery,
  TaskPage,
  UpdateWaitingChanges,
  UpdateWaitingResult,
  WorkflowCancelResult,
  WorkflowListQuery,
  WorkflowPage,
} from '../store';
import { NewWorkflow, WorkflowRecord, WorkflowTaskSummary } from '../../domain/workflow';
import type { ConcurrencyLimitRecord } from '../concurrency-store';
import { TenantSettings, TenantSettingsChange } from '../tenant-store';
import { RateLimit } from '../../domain/dispatch-limits';
import { LeaseGrant, MemberBeat, MemberHeartbeat, MemberRecord, PartitionLease } from '../cluster-store';
import type { HeldTask } from '../../domain/overflow-policy';
import { CheckpointSaveResult } from '../checkpoint-store';
import { checkpointText } from '../../domain/checkpoint';
import { ProgressReport, progressRows } from '../../domain/progress';
import type { AttemptLog, AttemptLogAppend } from '../../domain/attempt-log';
import { CronRecord } from '../../domain/cron/cron-definition';
import { CronChanges, CronFireView, CronFiring, CronFiringResult, CronListQuery } from '../cron-store';
import { StoreHealth } from '../store-health';
import { WriterStats } from './write-ops';
import { SqliteStoreOptions, StoreConnections } from './store-connections';

export type { SqliteStoreOptions } from './store-connections';

/**
 * The embedded store: one SQLite file (better-sqlite3) in WAL mode with `synchronous=FULL`, so a
 * commit is on disk before any caller is answered. Writes go through group commit on one writing
 * connection (a dedicated thread by default, thread-writer.ts); reads run directly on the
 * caller's connection and see every acknowledged write. Every statement lives in `ops/`, one file
 * per atomic operation.
 *
 * Its {@link health} is watched (file-watch.ts: the file deleted or replaced under the service,
 * a volume with no space left) and fed by every failed write (full disk, I/O errors, a read-only
 * file, corruption). While a fault is in force every write is refused at once with
 * `STORE_UNAVAILABLE` (503), without touching the file; a recoverable fault ends when the watch's
 * probe write commits again.
 */
export class SqliteStore implements Store {
  readonly name = 'sqlite';
  readonly health: StoreHealth;
  private readonly c: StoreConnections;

  /**
   * @param file database path (`:memory:` for tests); its folder is created if missing (the service
   *   checks the path before: store-preflight.ts, `SQLITE_CREATE_DIR`)
   */
  constructor(file: string, options: SqliteStoreOptions = {}) {
    this.c = new StoreConnections(file, options);
    this.health = this.c.health;
  }

  /**
   * Opens and migrates the file, then starts the writer and the reading threads (store-connections.ts).
   * @throws StoreConfigError when the file was made with another partition count or by a newer build
   */
  open(partitions: number): Promise<SchemaChange | null> {
    return this.c.open(partitions);
  }

  /** Answers every queued write, ends the threads and closes the file. Idempotent. */
  close(): Promise<void> {
    return this.c.close();
  }

  /**
   * A PASSIVE WAL checkpoint on a thread of its own at normal priority, so that the writer never
   * carries one inside a commit and none waits behind a scan of the (niced) aggregate thread
   * (bootstrap calls it every second; a no-op for stores writing in process).
   */
  async checkpoint(): Promise<void> {
    if (this.health.fault) return; // nothing to copy into a file that is gone or full
    await this.c.checkpoint();
  }

  /** Group-commit statistics (commits, operations, largest batch) and the writer's young generation. */
  commitStats(): Promise<WriterStats | null> {
    return this.c.commitStats();
  }

  async ping(): Promise<boolean> {
    return this.c.ping();
  }

  async insertTasks(tasks: NewTask[]): Promise<InsertResult[]> {
    return this.c.w.run('insertTasks', [tasks]);
  }

  async getTask(id: string): Promise<TaskRecord | null> {
    return this.c.r.tasks.getTask(id);
  }

  async getTaskStates(ids: readonly string[]): Promise<Map<string, TaskState>> {
    return this.c.r.taskStates(ids);
  }

  async getIdempotencyKeys(keys: ReadonlyArray<{ tenantId: string; key: string }>, now: number): Promise<Array<HeldIdempotencyKey | null>> {
    return this.c.r.idempotencyKeys(keys, now);
  }

  async getAttempts(id: string): Promise<AttemptRecord[]> {
    return this.c.r.tasks.getAttempts(id);
  }

  async listTasks(query: TaskListQuery): Promise<TaskPage> {
    return this.c.r.tasks.listTasks(query);
  }

  async loadDue(partition: number, until: number, limit: number): Promise<DueEntry[]> {
    return this.c.due.loadDue(partition, until, limit);
  }

  async markPending(ids: string[], now: number, epoch?: number): Promise<string[]> {
    return this.c.w.run('markPending', epoch === undefined ? [ids, now] : [ids, now, epoch]);
  }

  async claimTasks(
    ids: string[],
    workerId: string,
    now: number,
    leaseMs: number,
    epochs?: readonly number[],
    seqs?: readonly number[],
  ): Promise<ClaimedTask[]> {
    return this.c.w.run('claimTasks', [ids, workerId, now, leaseMs, epochs, seqs]);
  }

  async claimTasksAhead(
    ids: string[],
    workerId: string,
    now: number,
    until: number,
    leaseMs: number,
    seqs?: readonly number[],
  ): Promise<ClaimedTask[]> {
    return this.c.w.run('claimTasksAhead', [ids, workerId, now, until, leaseMs, seqs]);
  }

  async completeAttempts(completions: AttemptCompletion[], now: number): Promise<CompletionResult[]> {
    return this.c.w.run('completeAttempts', [completions, now]);
  }

  async cancelTask(id: string, now: number): Promise<CancelResult> {
    return this.c.w.run('cancelTask', [id, now]);
  }

  async updateWaitingTask(id: string, changes: UpdateWaitingChanges, now: number): Promise<UpdateWaitingResult> {
    return this.c.w.run('updateWaitingTask', [id, changes, now]);
  }

  async replayDead(id: string, now: number): Promise<DueEntry | null> {
    return this.c.w.run('replayDead', [id, now]);
  }

  async deleteDead(id: string): Promise<boolean> {
    return this.c.w.run('deleteDead', [id]);
  }

  async extendLeases(items: Array<{ taskId: string; attempt: number }>, until: number): Promise<number> {
    return (await this.heartbeatAttempts(items, until)).extended;
  }

  async heartbeatAttempts(items: Array<{ taskId: string; attempt: number }>, until: number): Promise<AttemptHeartbeat> {
    return this.c.w.run('heartbeatAttempts', [items, until]);
  }

  async findExpiredLeases(now: number, limit: number): Promise<OrphanedAttempt[]> {
    return this.c.r.findExpiredLeases(now, limit);
  }

  async auditScan(now: number, overdueBefore: number, limit: number): Promise<AuditScan> {
    return this.c.agg.auditScan(now, overdueBefore, limit);
  }

  async findOrphanedAttempts(limit: number, options?: OrphanSearch): Promise<OrphanedAttempt[]> {
    return this.c.r.tasks.findOrphanedAttempts(limit, options);
  }

  async countByState(): Promise<Record<TaskState, number>> {
    return this.c.agg.countByState();
  }

  async purgeFinished(before: number, now: number, limit: number): Promise<{ tasks: number; idempotencyKeys: number }> {
    return this.c.w.run('purgeFinished', [before, now, limit]);
  }

  async createCron(cron: CronRecord): Promise<void> {
    return this.c.w.run('createCron', [cron]);
  }

  async getCron(id: string): Promise<CronRecord | null> {
    return this.c.r.crons.getCron(id);
  }

  async listCrons(query: CronListQuery): Promise<{ crons: CronRecord[]; nextCursor: string | null }> {
    return this.c.r.crons.listCrons(query);
  }

  async updateCron(id: string, changes: CronChanges, now: number): Promise<CronRecord | null> {
    return this.c.w.run('updateCron', [id, changes, now]);
  }

  async deleteCron(id: string): Promise<boolean> {
    return this.c.w.run('deleteCron', [id]);
  }

  async loadDueCrons(until: number, limit: number): Promise<CronRecord[]> {
    return this.c.r.crons.loadDueCrons(until, limit);
  }

  async fireCrons(firings: CronFiring[], now: number): Promise<CronFiringResult[]> {
    return this.c.w.run('fireCrons', [firings, now]);
  }

  async listCronFires(
    cronId: string,
    query: { limit: number; cursor?: string },
  ): Promise<{ fires: CronFireView[]; nextCursor: string | null }> {
    return this.c.r.crons.listCronFires(cronId, query);
  }

  async cronsWithQueuedInstances(limit: number): Promise<string[]> {
    return this.c.r.crons.cronsWithQueuedInstances(limit);
  }

  async releaseQueuedInstances(cronIds: string[], now: number): Promise<DueEntry[]> {
    return this.c.w.run('releaseQueuedInstances', [cronIds, now]);
  }

  async purgeCronFires(before: number, limit: number): Promise<number> {
    return this.c.w.run('purgeCronFires', [before, limit]);
  }

  async insertWorkflow(workflow: NewWorkflow): Promise<number[]> {
    return this.c.w.run('insertWorkflow', [workflow]);
  }

  async getWorkflow(id: string): Promise<WorkflowRecord | null> {
    return this.c.r.workflows.getWorkflow(id);
  }

  async getWorkflowTasks(id: string): Promise<WorkflowTaskSummary[]> {
    return this.c.r.workflows.getWorkflowTasks(id);
  }

  async listWorkflows(query: WorkflowListQuery): Promise<WorkflowPage> {
    return this.c.r.workflows.listWorkflows(query);
  }

  async cancelWorkflow(id: string, now: number): Promise<WorkflowCancelResult> {
    return this.c.w.run('cancelWorkflow', [id, now]);
  }

  async saveCheckpoint(taskId: string, attempt: number, value: unknown, now: number): Promise<CheckpointSaveResult> {
    return this.c.w.run('saveCheckpoint', [taskId, attempt, checkpointText(value), now]);
  }

  async reportProgress(reports: ProgressReport[], now: number): Promise<number> {
    if (reports.length === 0) return 0;
    const rows = progressRows(reports);
    return this.c.w.run('reportProgress', [rows, now]);
  }

  async appendAttemptLogs(logs: AttemptLogAppend[], now: number): Promise<number> {
    if (logs.length === 0) return 0;
    return this.c.w.run('appendAttemptLogs', [logs, now]);
  }

  async getAttemptLog(taskId: string, attempt: number): Promise<AttemptLog> {
    return this.c.r.attemptLog(taskId, attempt);
  }

  async putTenantSettings(change: TenantSettingsChange): Promise<TenantSettings> {
    return this.c.w.run('putTenantSettings', [change]) as Promise<TenantSettings>;
  }

  async deleteTenantSettings(tenantId: string): Promise<boolean> {
    return this.c.w.run('deleteTenantSettings', [tenantId]);
  }

  async listTenantSettings(): Promise<TenantSettings[]> {
    return this.c.r.tenants.listTenantSettings();
  }

  async putTaskTypeLimit(taskType: string, limit: RateLimit | null, now: number): Promise<void> {
    return this.c.w.run('putTaskTypeLimit', [taskType, limit, now]);
  }

  async listTaskTypeLimits(): Promise<Array<{ taskType: string; limit: RateLimit }>> {
    return this.c.r.tenants.listTaskTypeLimits();
  }

  async putConcurrencyLimit(key: string, maxRunning: number | null, now: number): Promise<void> {
    return this.c.w.run('putConcurrencyLimit', [key, maxRunning, now]);
  }

  async listConcurrencyLimits(): Promise<ConcurrencyLimitRecord[]> {
    return this.c.r.concurrency.listConcurrencyLimits();
  }

  async countWaitingByTenant(): Promise<Record<string, number>> {
    return this.c.agg.countWaitingByTenant();
  }

  // Overflow part (overflow-store.ts).

  async listOverflow(limit: number, excludeTenants?: readonly string[]): Promise<HeldTask[]> {
    return this.c.r.listOverflow(limit, excludeTenants);
  }

  async countOverflowByTenant(): Promise<Record<string, number>> {
    return this.c.r.countOverflow();
  }

  async releaseOverflow(ids: readonly string[], now: number): Promise<DueEntry[]> {
    return this.c.w.run('releaseOverflow', [ids, now]);
  }

  // Cluster part (cluster-store.ts). The embedded profile never leases; these exist so the
  // contract and its conformance tests hold on every adapter.

  async heartbeatMember(member: MemberBeat, now: number, ttlMs: number): Promise<MemberHeartbeat> {
    return this.c.w.run('heartbeatMember', [member, now, ttlMs]);
  }

  async listLiveMembers(now: number): Promise<MemberRecord[]> {
    return this.c.r.cluster.listLiveMembers(now);
  }

  async removeMember(memberId: string, instance?: string): Promise<boolean> {
    return this.c.w.run('removeMember', [memberId, instance]);
  }

  async acquireLease(partition: number, owner: string, now: number, ttlMs: number): Promise<LeaseGrant> {
    return this.c.w.run('acquireLease', [partition, owner, now, ttlMs]);
  }

  async renewLease(partition: number, owner: string, epoch: number, now: number, ttlMs: number): Promise<PartitionLease | null> {
    return this.c.w.run('renewLease', [partition, owner, epoch, now, ttlMs]);
  }

  async releaseLease(partition: number, owner: string, epoch: number): Promise<boolean> {
    return this.c.w.run('releaseLease', [partition, owner, epoch]);
  }

  async listLeases(): Promise<PartitionLease[]> {
    return this.c.r.cluster.listLeases();
  }

  async fencePartition(partition: number, epoch: number): Promise<number> {
    return this.c.w.run('fencePartition', [partition, epoch]);
  }
}
