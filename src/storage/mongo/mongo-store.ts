import { CronRecord } from '../../domain/cron/cron-definition';
import { AttemptRecord, ClaimedTask, DueEntry, NewTask, TaskRecord, TaskState } from '../../domain/task';
import { CronChanges, CronFireView, CronFiring, CronFiringResult, CronListQuery } from '../cron-store';
import {
  AttemptCompletion,
  AttemptHeartbeat,
  AuditScan,
  CancelResult,
  CompletionResult,
  HeldIdempotencyKey,
  InsertResult,
  OrphanedAttempt,
  OrphanSearch,
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
import { cancelWorkflow } from './ops/cancel-workflow';
import { insertWorkflow } from './ops/insert-workflow';
import { getWorkflow, getWorkflowTasks, listWorkflows } from './ops/read-workflows';
import type { MongoCapabilities, MongoCollections } from './collections';
import type { MongoStoreOptions, Session } from './session';
import { auditScan } from './ops/audit';
import { cancelTask } from './ops/cancel-task';
import { claimTasks } from './ops/claim-tasks';
import { completeAttempts } from './ops/complete-attempts';
import { createCron, deleteCron, updateCron } from './ops/cron-definitions';
import { cronsWithQueuedInstances, getCron, listCronFires, listCrons, loadDueCrons } from './ops/cron-reads';
import { deleteDead, replayDead } from './ops/dead-letter';
import { fireCrons } from './ops/fire-crons';
import { insertTasks } from './ops/insert-tasks';
import { findExpiredLeases, heartbeatAttempts } from './ops/leases';
import { loadDue } from './ops/load-due';
import { markPending } from './ops/mark-pending';
import { purgeCronFires } from './ops/purge-cron-fires';
import { purgeFinished } from './ops/purge-finished';
import { countByState, findOrphanedAttempts, getAttempts, getTask, listTasks } from './ops/read-tasks';
import { releaseQueuedInstances } from './ops/release-cron-queue';
import { getTaskStates } from './ops/read-task-states';
import { getIdempotencyKeys } from './ops/read-idempotency-keys';
import { updateWaitingTask } from './ops/update-waiting-task';
import type { WriteLane } from './write-queue';
import { countWaitingByTenant, listTaskTypeLimits, listTenantSettings, putTaskTypeLimit, putTenantSettings } from './ops/tenant-settings';
import { listConcurrencyLimits, putConcurrencyLimit } from './ops/concurrency-limits';
import type { ConcurrencyLimitRecord } from '../concurrency-store';
import { TenantSettings, TenantSettingsChange } from '../tenant-store';
import { RateLimit } from '../../domain/dispatch-limits';
import { LeaseGrant, MemberBeat, MemberHeartbeat, MemberRecord, PartitionLease } from '../cluster-store';
import { acquireLease } from './ops/acquire-lease';
import { listLeases, listLiveMembers } from './ops/cluster-reads';
import { fencePartition } from './ops/fence-partition';
import { heartbeatMember } from './ops/heartbeat-member';
import { releaseLease } from './ops/release-lease';
import { removeMember } from './ops/remove-member';
import { deleteTenantSettings } from './ops/delete-tenant-settings';
import { renewLease } from './ops/renew-lease';
import { listOverflow } from './ops/list-overflow';
import { countOverflowByTenant } from './ops/count-overflow';
import { releaseOverflow } from './ops/release-overflow';
import type { HeldTask } from '../../domain/overflow-policy';
import { saveCheckpoint } from './ops/save-checkpoint';
import { reportProgress } from './ops/report-progress';
import { appendAttemptLogs } from './ops/append-attempt-logs';
import { getAttemptLog } from './ops/read-attempt-log';
import type { AttemptLog, AttemptLogAppend } from '../../domain/attempt-log';
import { CheckpointSaveResult } from '../checkpoint-store';
import { checkpointText } from '../../domain/checkpoint';
import { ProgressReport, progressRows } from '../../domain/progress';

import type { StoreHealth } from '../store-health';
import { StoreConnections } from './store-connections';

export type { MongoStoreOptions } from './session';
export { databaseOfUri } from './session';

/**
 * The cluster-mode store: MongoDB through the official driver, one database per scheduler.
 * Same contract as the SQLite store (src/storage/store.ts), checked by the same conformance suite
 * (also against FerretDB). Every write is acknowledged with write concern `{w: 'majority', j: true}`
 * and is a single-document compare-and-set (filters on the expected state and attempt), never a
 * blind write; no multi-document transaction is used, so each operation in `ops/` states in its
 * header the order of writes that keeps it correct without one. Writes of one store instance run
 * in call order ({@link WriteQueue}); reads run directly. Collections, indexes and the reasoning:
 * docs/MONGODB.md.
 */
export class MongoStore implements Store {
  readonly name = 'mongodb';
  private readonly conn: StoreConnections;
  /** A lost connection (connection-health.ts): writes answer `STORE_UNAVAILABLE` and `/readyz` 503 until a writable server is seen again. */
  readonly health: StoreHealth;

  /**
   * @param uri MongoDB connection string (`MONGODB_URI`), e.g. `mongodb://127.0.0.1:27017/scheduler`
   * @param options database name and server selection timeout
   */
  constructor(uri: string, options: MongoStoreOptions = {}) {
    this.conn = new StoreConnections(uri, options);
    this.health = this.conn.health;
  }

  /** Server capabilities found at open (null while closed). */
  get capabilities(): MongoCapabilities | null {
    return this.conn.capabilities;
  }

  /**
   * Connects, creates collections and indexes (idempotent), and records the partition count and
   * schema version on first use.
   * @returns null: no versioned migrations to report (indexes are ensured at every open)
   * @throws StoreConfigError when the database was created with another partition count
   */
  async open(partitions: number): Promise<null> {
    await this.conn.open(partitions);
    return null;
  }

  /** Answers every write issued before it, then disconnects. Idempotent. */
  close(): Promise<void> {
    return this.conn.close();
  }

  /** The open session's collections (reads run on them directly). */
  private get c(): MongoCollections {
    return this.conn.c;
  }

  /** Queues a write (store-connections.ts). */
  private write<T>(op: (c: MongoCollections, s: Session) => Promise<T>, lane: WriteLane = 'ordered'): Promise<T> {
    return this.conn.write(op, lane);
  }

  ping(): Promise<boolean> {
    return this.conn.ping();
  }

  async insertTasks(tasks: NewTask[]): Promise<InsertResult[]> {
    return this.write((c, s) => insertTasks(c, s.partitions, tasks));
  }

  async getTask(id: string): Promise<TaskRecord | null> {
    return getTask(this.c, id);
  }

  async getTaskStates(ids: readonly string[]): Promise<Map<string, TaskState>> {
    return getTaskStates(this.c, ids);
  }

  async getIdempotencyKeys(keys: ReadonlyArray<{ tenantId: string; key: string }>, now: number): Promise<Array<HeldIdempotencyKey | null>> {
    return getIdempotencyKeys(this.c, keys, now);
  }

  async getAttempts(id: string): Promise<AttemptRecord[]> {
    return getAttempts(this.c, id);
  }

  async listTasks(query: TaskListQuery): Promise<TaskPage> {
    return listTasks(this.c, query);
  }

  async loadDue(partition: number, until: number, limit: number): Promise<DueEntry[]> {
    return loadDue(this.c, partition, until, limit);
  }

  async markPending(ids: string[], now: number, epoch?: number): Promise<string[]> {
    return this.write((c, s) => markPending(c, s.partitions, ids, now, epoch));
  }

  /** `seqs` hints (see Store) are not needed here: a task document is found by its id, its `_id`. */
  async claimTasks(ids: string[], workerId: string, now: number, leaseMs: number, epochs?: readonly number[]): Promise<ClaimedTask[]> {
    // The attempt starts, and its lease runs, when the claim is written, not when it was queued.
    return this.write((c) => claimTasks(c, ids, workerId, Math.max(now, this.conn.options.clock?.now() ?? now), leaseMs, epochs));
  }

  async completeAttempts(completions: AttemptCompletion[], now: number): Promise<CompletionResult[]> {
    return this.write((c) => completeAttempts(c, completions, now), 'first');
  }

  async cancelTask(id: string, now: number): Promise<CancelResult> {
    return this.write((c) => cancelTask(c, id, now));
  }

  async updateWaitingTask(id: string, changes: UpdateWaitingChanges, now: number): Promise<UpdateWaitingResult> {
    return this.write((c) => updateWaitingTask(c, id, changes, now));
  }

  async replayDead(id: string, now: number): Promise<DueEntry | null> {
    return this.write((c) => replayDead(c, id, now));
  }

  async deleteDead(id: string): Promise<boolean> {
    return this.write((c) => deleteDead(c, id));
  }

  async extendLeases(items: Array<{ taskId: string; attempt: number }>, until: number): Promise<number> {
    return (await this.heartbeatAttempts(items, until)).extended;
  }

  async heartbeatAttempts(items: Array<{ taskId: string; attempt: number }>, until: number): Promise<AttemptHeartbeat> {
    return this.write((c) => heartbeatAttempts(c, items, until), 'first');
  }

  async saveCheckpoint(taskId: string, attempt: number, value: unknown, now: number): Promise<CheckpointSaveResult> {
    const text = checkpointText(value);
    return this.write((c) => saveCheckpoint(c, taskId, attempt, text, now), 'first');
  }

  async reportProgress(reports: ProgressReport[], now: number): Promise<number> {
    if (reports.length === 0) return 0;
    const rows = progressRows(reports);
    // The `first` lane, as the completion that may follow it: behind it, the last report found
    // the attempt ended and was dropped (a SUCCEEDED task showed its next-to-last progress).
    return this.write((c) => reportProgress(c, rows, now), 'first');
  }

  async appendAttemptLogs(logs: AttemptLogAppend[], _now: number): Promise<number> {
    if (logs.length === 0) return 0;
    return this.write((c) => appendAttemptLogs(c, logs));
  }

  async getAttemptLog(taskId: string, attempt: number): Promise<AttemptLog> {
    return getAttemptLog(this.c, taskId, attempt);
  }

  async findExpiredLeases(now: number, limit: number): Promise<OrphanedAttempt[]> {
    return findExpiredLeases(this.c, now, limit);
  }

  async auditScan(now: number, overdueBefore: number, limit: number): Promise<AuditScan> {
    return auditScan(this.c, now, overdueBefore, limit);
  }

  async findOrphanedAttempts(limit: number, options?: OrphanSearch): Promise<OrphanedAttempt[]> {
    return findOrphanedAttempts(this.c, limit, options);
  }

  async countByState(): Promise<Record<TaskState, number>> {
    return countByState(this.c);
  }

  async purgeFinished(before: number, now: number, limit: number): Promise<{ tasks: number; idempotencyKeys: number }> {
    return this.write((c) => purgeFinished(c, before, now, limit));
  }

  async createCron(cron: CronRecord): Promise<void> {
    return this.write((c) => createCron(c, cron));
  }

  async getCron(id: string): Promise<CronRecord | null> {
    return getCron(this.c, id);
  }

  async listCrons(query: CronListQuery): Promise<{ crons: CronRecord[]; nextCursor: string | null }> {
    return listCrons(this.c, query);
  }

  async updateCron(id: string, changes: CronChanges, now: number): Promise<CronRecord | null> {
    return this.write((c) => updateCron(c, id, changes, now));
  }

  async deleteCron(id: string): Promise<boolean> {
    return this.write((c) => deleteCron(c, id));
  }

  async loadDueCrons(until: number, limit: number): Promise<CronRecord[]> {
    return loadDueCrons(this.c, until, limit);
  }

  async fireCrons(firings: CronFiring[], now: number): Promise<CronFiringResult[]> {
    return this.write((c) => fireCrons(c, firings, now));
  }

  async listCronFires(
    cronId: string,
    query: { limit: number; cursor?: string },
  ): Promise<{ fires: CronFireView[]; nextCursor: string | null }> {
    return listCronFires(this.c, cronId, query);
  }

  async cronsWithQueuedInstances(limit: number): Promise<string[]> {
    return cronsWithQueuedInstances(this.c, limit);
  }

  async releaseQueuedInstances(cronIds: string[], now: number): Promise<DueEntry[]> {
    return this.write((c) => releaseQueuedInstances(c, cronIds, now));
  }

  async purgeCronFires(before: number, limit: number): Promise<number> {
    return this.write((c) => purgeCronFires(c, before, limit));
  }
  async putTenantSettings(change: TenantSettingsChange): Promise<TenantSettings> {
    return this.write((c) => putTenantSettings(c.tenantSettings, change));
  }

  async deleteTenantSettings(tenantId: string): Promise<boolean> {
    return this.write((c) => deleteTenantSettings(c.tenantSettings, tenantId));
  }

  async listTenantSettings(): Promise<TenantSettings[]> {
    return listTenantSettings(this.c.tenantSettings);
  }

  async putTaskTypeLimit(taskType: string, limit: RateLimit | null, now: number): Promise<void> {
    return this.write((c) => putTaskTypeLimit(c.taskTypeLimits, taskType, limit, now));
  }

  async listTaskTypeLimits(): Promise<Array<{ taskType: string; limit: RateLimit }>> {
    return listTaskTypeLimits(this.c.taskTypeLimits);
  }

  async putConcurrencyLimit(key: string, maxRunning: number | null, now: number): Promise<void> {
    return this.write((c) => putConcurrencyLimit(c.concurrencyLimits, key, maxRunning, now));
  }

  async listConcurrencyLimits(): Promise<ConcurrencyLimitRecord[]> {
    return listConcurrencyLimits(this.c.concurrencyLimits);
  }

  async countWaitingByTenant(): Promise<Record<string, number>> {
    return countWaitingByTenant(this.c.tasks);
  }

  // Workflows (docs/DESIGN.md §8): documents and crash windows in ops/insert-workflow.ts, workflow-progress.ts,
  // cancel-workflow.ts and repair-workflows.ts; task operations above keep them consistent.
  async insertWorkflow(workflow: NewWorkflow): Promise<number[]> {
    return this.write((c) => insertWorkflow(c, workflow));
  }

  async getWorkflow(id: string): Promise<WorkflowRecord | null> {
    return getWorkflow(this.c, id);
  }

  async getWorkflowTasks(id: string): Promise<WorkflowTaskSummary[]> {
    return getWorkflowTasks(this.c, id);
  }

  async listWorkflows(query: WorkflowListQuery): Promise<WorkflowPage> {
    return listWorkflows(this.c, query);
  }

  async cancelWorkflow(id: string, now: number): Promise<WorkflowCancelResult> {
    return this.write((c) => cancelWorkflow(c, id, now));
  }

  // Cluster part (cluster-store.ts): lease and member writes never wait behind the task writes
  // (StoreConnections.clusterWrite).

  private clusterWrite<T>(op: (c: MongoCollections) => Promise<T>): Promise<T> {
    return this.conn.clusterWrite(op);
  }

  async heartbeatMember(member: MemberBeat, now: number, ttlMs: number): Promise<MemberHeartbeat> {
    return this.clusterWrite((c) => heartbeatMember(c, member, now, ttlMs));
  }

  async listLiveMembers(now: number): Promise<MemberRecord[]> {
    return listLiveMembers(this.c, now);
  }

  async removeMember(memberId: string, instance?: string): Promise<boolean> {
    return this.clusterWrite((c) => removeMember(c, memberId, instance));
  }

  async acquireLease(partition: number, owner: string, now: number, ttlMs: number): Promise<LeaseGrant> {
    return this.clusterWrite((c) => acquireLease(c, partition, owner, now, ttlMs));
  }

  async renewLease(partition: number, owner: string, epoch: number, now: number, ttlMs: number): Promise<PartitionLease | null> {
    return this.clusterWrite((c) => renewLease(c, partition, owner, epoch, now, ttlMs));
  }

  async releaseLease(partition: number, owner: string, epoch: number): Promise<boolean> {
    return this.clusterWrite((c) => releaseLease(c, partition, owner, epoch));
  }

  async listLeases(): Promise<PartitionLease[]> {
    return listLeases(this.c);
  }

  /** Queued with the task writes: a fence must land after the writes this store issued before it. */
  async fencePartition(partition: number, epoch: number): Promise<number> {
    return this.write((c) => fencePartition(c, partition, epoch), 'first');
  }

  // Overflow part (overflow-store.ts).
  async listOverflow(limit: number, excludeTenants?: readonly string[]): Promise<HeldTask[]> {
    return listOverflow(this.c, limit, excludeTenants);
  }

  async countOverflowByTenant(): Promise<Record<string, number>> {
    return countOverflowByTenant(this.c);
  }

  async releaseOverflow(ids: readonly string[], now: number): Promise<DueEntry[]> {
    return this.write((c) => releaseOverflow(c, ids, now));
  }
}
