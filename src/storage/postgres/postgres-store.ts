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
import { workflowLockKey } from './ops/workflow-progress';
import { auditScan } from './ops/audit';
import { cancelTask } from './ops/cancel-task';
import { ClaimGroups } from './claim-groups';
import { completeAttempts, completionIsOneStatement } from './ops/complete-attempts';
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

import { Clock } from '../../domain/clock';
import { SchemaChange } from '../store';
import { StoreHealth } from '../store-health';
import { PostgresStoreOptions, StoreConnections } from './store-connections';

export type { PostgresStoreOptions } from './store-connections';

/**
 * The PostgreSQL store (cluster mode: several service processes share one database; partitions are
 * owned through leases with fencing epochs, as with MongoDB). Same contract as the SQLite store,
 * checked by the same conformance suite. Tables mirror SQLite's (migrations/), every operation in
 * `ops/` is one file with its header (inputs, outputs, guarantee), and this class only routes each
 * call to its operation through the store's connections (store-connections.ts): writes go through
 * group commit on a writing connection (write-queue.ts), answered after their transaction's
 * COMMIT returned with `synchronous_commit=on`; reads run on the pool and see every acknowledged
 * write. Its {@link health} is the connections' (a lost connection: 503 `STORE_UNAVAILABLE` until
 * the server answers again).
 */
export class PostgresStore implements Store {
  readonly name = 'postgres';
  readonly health: StoreHealth;
  private readonly c: StoreConnections;
  /** The claims gathered per group commit (claim-groups.ts). */
  private readonly claims: ClaimGroups;

  /**
   * @param url connection string (`POSTGRES_URL`), e.g. `postgres://scheduler@127.0.0.1:5432/scheduler`
   */
  constructor(url: string, options: PostgresStoreOptions = {}) {
    this.c = new StoreConnections(url, options);
    this.health = this.c.health;
    const clock: Pick<Clock, 'now'> | undefined = options.clock;
    this.claims = new ClaimGroups(
      (op, oneStatement) => this.c.write(op, 'ordered', oneStatement),
      (now) => Math.max(now, clock?.now() ?? now),
    );
  }

  /**
   * Connects, migrates (under an advisory lock: nodes may start together) and records the
   * partition count on first use.
   * @throws StoreConfigError when the database was created with another partition count or by a newer build
   * @throws StoreUnavailableError when the server cannot be reached
   */
  open(partitions: number): Promise<SchemaChange | null> {
    return this.c.open(partitions);
  }

  /** Answers every write issued before it, then disconnects. Idempotent. */
  close(): Promise<void> {
    return this.c.close();
  }

  /**
   * Group-commit statistics (transactions, operations in them, largest batch; `bare`: the
   * transactions that were one statement without BEGIN/COMMIT, write-queue.ts).
   */
  async commitStats(): Promise<{ commits: number; bare: number; operations: number; largestBatch: number } | null> {
    return this.c.commitStats();
  }

  ping(): Promise<boolean> {
    return this.c.ping();
  }

  async insertTasks(tasks: NewTask[]): Promise<InsertResult[]> {
    return this.c.write((db) => insertTasks(db, tasks));
  }

  async getTask(id: string): Promise<TaskRecord | null> {
    return this.c.read((db) => getTask(db, id));
  }

  async getTaskStates(ids: readonly string[]): Promise<Map<string, TaskState>> {
    return this.c.read((db) => getTaskStates(db, ids));
  }

  async getIdempotencyKeys(keys: ReadonlyArray<{ tenantId: string; key: string }>, now: number): Promise<Array<HeldIdempotencyKey | null>> {
    return this.c.read((db) => getIdempotencyKeys(db, keys, now));
  }

  async getAttempts(id: string): Promise<AttemptRecord[]> {
    return this.c.read((db) => getAttempts(db, id));
  }

  async listTasks(query: TaskListQuery): Promise<TaskPage> {
    return this.c.read((db) => listTasks(db, query));
  }

  async loadDue(partition: number, until: number, limit: number): Promise<DueEntry[]> {
    return this.c.read((db) => loadDue(db, partition, until, limit));
  }

  async markPending(ids: string[], now: number, epoch?: number): Promise<string[]> {
    return this.c.write((db) => markPending(db, ids, now, epoch), 'deferred');
  }

  async claimTasks(
    ids: string[],
    workerId: string,
    now: number,
    leaseMs: number,
    epochs?: readonly number[],
    _seqs?: readonly number[],
  ): Promise<ClaimedTask[]> {
    // Gathered with the other claims of the same group commit (claim-groups.ts). The attempt
    // starts, and its lease runs, when the claim is written, not when it was queued.
    if (ids.length === 0) return [];
    return this.claims.claim({ ids, workerId, now, leaseMs, ...(epochs ? { epochs } : {}) });
  }

  async completeAttempts(completions: AttemptCompletion[], now: number): Promise<CompletionResult[]> {
    return this.c.write(
      (db, inTransaction) => completeAttempts(db, completions, now, inTransaction),
      'first',
      () => completionIsOneStatement(completions),
      // The workflows of every completion that may be in one, locked in id order with the rest of
      // the group commit's before any is written (write-queue.ts, `lockFirst`).
      completions.filter((c) => c.workflowId !== null).map((c) => c.taskId),
    );
  }

  async cancelTask(id: string, now: number): Promise<CancelResult> {
    return this.c.write((db) => cancelTask(db, id, now), 'ordered', undefined, [id]);
  }

  async updateWaitingTask(id: string, changes: UpdateWaitingChanges, now: number): Promise<UpdateWaitingResult> {
    return this.c.write((db) => updateWaitingTask(db, id, changes, now));
  }

  async replayDead(id: string, now: number): Promise<DueEntry | null> {
    return this.c.write((db) => replayDead(db, id, now), 'ordered', undefined, [id]);
  }

  async deleteDead(id: string): Promise<boolean> {
    return this.c.write((db) => deleteDead(db, id));
  }

  async extendLeases(items: Array<{ taskId: string; attempt: number }>, until: number): Promise<number> {
    return (await this.heartbeatAttempts(items, until)).extended;
  }

  async heartbeatAttempts(items: Array<{ taskId: string; attempt: number }>, until: number): Promise<AttemptHeartbeat> {
    return this.c.write((db) => heartbeatAttempts(db, items, until), 'first');
  }

  async saveCheckpoint(taskId: string, attempt: number, value: unknown, now: number): Promise<CheckpointSaveResult> {
    const text = checkpointText(value);
    return this.c.write((db) => saveCheckpoint(db, taskId, attempt, text, now), 'first');
  }

  async reportProgress(reports: ProgressReport[], now: number): Promise<number> {
    if (reports.length === 0) return 0;
    const rows = progressRows(reports);
    // The `first` lane, as the completion that may follow it: behind it, the last report found
    // the attempt ended and was dropped (a SUCCEEDED task showed its next-to-last progress).
    return this.c.write((db) => reportProgress(db, rows, now), 'first');
  }

  async appendAttemptLogs(logs: AttemptLogAppend[], _now: number): Promise<number> {
    if (logs.length === 0) return 0;
    return this.c.write((db) => appendAttemptLogs(db, logs));
  }

  async getAttemptLog(taskId: string, attempt: number): Promise<AttemptLog> {
    return this.c.read((db) => getAttemptLog(db, taskId, attempt));
  }

  async findExpiredLeases(now: number, limit: number): Promise<OrphanedAttempt[]> {
    return this.c.read((db) => findExpiredLeases(db, now, limit));
  }

  async auditScan(now: number, overdueBefore: number, limit: number): Promise<AuditScan> {
    return this.c.read((db) => auditScan(db, now, overdueBefore, limit));
  }

  async findOrphanedAttempts(limit: number, options?: OrphanSearch): Promise<OrphanedAttempt[]> {
    return this.c.read((db) => findOrphanedAttempts(db, limit, options));
  }

  async countByState(): Promise<Record<TaskState, number>> {
    return this.c.read((db) => countByState(db));
  }

  async purgeFinished(before: number, now: number, limit: number): Promise<{ tasks: number; idempotencyKeys: number }> {
    return this.c.write((db) => purgeFinished(db, before, now, limit));
  }

  async createCron(cron: CronRecord): Promise<void> {
    return this.c.write((db) => createCron(db, cron));
  }

  async getCron(id: string): Promise<CronRecord | null> {
    return this.c.read((db) => getCron(db, id));
  }

  async listCrons(query: CronListQuery): Promise<{ crons: CronRecord[]; nextCursor: string | null }> {
    return this.c.read((db) => listCrons(db, query));
  }

  async updateCron(id: string, changes: CronChanges, now: number): Promise<CronRecord | null> {
    return this.c.write((db) => updateCron(db, id, changes, now));
  }

  async deleteCron(id: string): Promise<boolean> {
    return this.c.write((db) => deleteCron(db, id));
  }

  async loadDueCrons(until: number, limit: number): Promise<CronRecord[]> {
    return this.c.read((db) => loadDueCrons(db, until, limit));
  }

  async fireCrons(firings: CronFiring[], now: number): Promise<CronFiringResult[]> {
    return this.c.write((db) => fireCrons(db, firings, now));
  }

  async listCronFires(
    cronId: string,
    query: { limit: number; cursor?: string },
  ): Promise<{ fires: CronFireView[]; nextCursor: string | null }> {
    return this.c.read((db) => listCronFires(db, cronId, query));
  }

  async cronsWithQueuedInstances(limit: number): Promise<string[]> {
    return this.c.read((db) => cronsWithQueuedInstances(db, limit));
  }

  async releaseQueuedInstances(cronIds: string[], now: number): Promise<DueEntry[]> {
    return this.c.write((db) => releaseQueuedInstances(db, cronIds, now));
  }

  async purgeCronFires(before: number, limit: number): Promise<number> {
    return this.c.write((db) => purgeCronFires(db, before, limit));
  }
  async putTenantSettings(change: TenantSettingsChange): Promise<TenantSettings> {
    return this.c.write((db) => putTenantSettings(db, change));
  }

  async deleteTenantSettings(tenantId: string): Promise<boolean> {
    return this.c.write((db) => deleteTenantSettings(db, tenantId));
  }

  async listTenantSettings(): Promise<TenantSettings[]> {
    return this.c.read((db) => listTenantSettings(db));
  }

  async putTaskTypeLimit(taskType: string, limit: RateLimit | null, now: number): Promise<void> {
    return this.c.write((db) => putTaskTypeLimit(db, taskType, limit, now));
  }

  async listTaskTypeLimits(): Promise<Array<{ taskType: string; limit: RateLimit }>> {
    return this.c.read((db) => listTaskTypeLimits(db));
  }

  async putConcurrencyLimit(key: string, maxRunning: number | null, now: number): Promise<void> {
    return this.c.write((db) => putConcurrencyLimit(db, key, maxRunning, now));
  }

  async listConcurrencyLimits(): Promise<ConcurrencyLimitRecord[]> {
    return this.c.read((db) => listConcurrencyLimits(db));
  }

  async countWaitingByTenant(): Promise<Record<string, number>> {
    return this.c.read((db) => countWaitingByTenant(db));
  }

  // Workflows (docs/DESIGN.md §8): every operation that ends a workflow task keeps its workflow
  // consistent in the same transaction (ops/workflow-progress.ts).
  async insertWorkflow(workflow: NewWorkflow): Promise<number[]> {
    return this.c.write((db) => insertWorkflow(db, workflow));
  }

  async getWorkflow(id: string): Promise<WorkflowRecord | null> {
    return this.c.read((db) => getWorkflow(db, id));
  }

  async getWorkflowTasks(id: string): Promise<WorkflowTaskSummary[]> {
    return this.c.read((db) => getWorkflowTasks(db, id));
  }

  async listWorkflows(query: WorkflowListQuery): Promise<WorkflowPage> {
    return this.c.read((db) => listWorkflows(db, query));
  }

  async cancelWorkflow(id: string, now: number): Promise<WorkflowCancelResult> {
    return this.c.write((db) => cancelWorkflow(db, id, now), 'ordered', undefined, [workflowLockKey(id)]);
  }

  // Cluster part (cluster-store.ts). Lease and member writes never wait behind the task writes (a
  // renewal queued behind a large batch can miss its lease's expiry): each is one statement, a
  // compare-and-set on one row of `partition_leases` or `members`, run on a pooled connection in a
  // transaction of its own; their order with the task writes does not matter.

  async heartbeatMember(member: MemberBeat, now: number, ttlMs: number): Promise<MemberHeartbeat> {
    return this.c.direct((db) => heartbeatMember(db, member, now, ttlMs));
  }

  async listLiveMembers(now: number): Promise<MemberRecord[]> {
    return this.c.read((db) => listLiveMembers(db, now));
  }

  async removeMember(memberId: string, instance?: string): Promise<boolean> {
    return this.c.direct((db) => removeMember(db, memberId, instance));
  }

  async acquireLease(partition: number, owner: string, now: number, ttlMs: number): Promise<LeaseGrant> {
    return this.c.direct((db) => acquireLease(db, partition, owner, now, ttlMs));
  }

  async renewLease(partition: number, owner: string, epoch: number, now: number, ttlMs: number): Promise<PartitionLease | null> {
    return this.c.direct((db) => renewLease(db, partition, owner, epoch, now, ttlMs));
  }

  async releaseLease(partition: number, owner: string, epoch: number): Promise<boolean> {
    return this.c.direct((db) => releaseLease(db, partition, owner, epoch));
  }

  async listLeases(): Promise<PartitionLease[]> {
    return this.c.read((db) => listLeases(db));
  }

  /** Queued with the task writes: a fence must land after the writes this store issued before it. */
  async fencePartition(partition: number, epoch: number): Promise<number> {
    return this.c.write((db) => fencePartition(db, partition, epoch), 'first');
  }

  // Overflow part (overflow-store.ts).
  async listOverflow(limit: number, excludeTenants?: readonly string[]): Promise<HeldTask[]> {
    return this.c.read((db) => listOverflow(db, limit, excludeTenants));
  }

  async countOverflowByTenant(): Promise<Record<string, number>> {
    return this.c.read((db) => countOverflowByTenant(db));
  }

  async releaseOverflow(ids: readonly string[], now: number): Promise<DueEntry[]> {
    return this.c.write((db) => releaseOverflow(db, ids, now));
  }
}
