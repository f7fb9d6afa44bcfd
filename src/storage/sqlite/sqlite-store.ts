import type Database from 'better-sqlite3';
import { AttemptRecord, ClaimedTask, DueEntry, NewTask, TaskRecord, TaskState } from '../../domain/task';
import {
  AttemptHeartbeat,
  AuditScan,
  InsertResult,
  AttemptCompletion,
  CancelResult,
  CompletionResult,
  OrphanedAttempt,
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
import { MAIN_READS_CACHE_KIB, openStoreFile } from './open-store-file';
import { InProcessWriter } from './in-process-writer';
import { ThreadWriter } from './thread-writer';
import { AggregateReader, InProcessAggregateReader, ThreadAggregateReader } from './aggregate-reader';
import { DueReader, InProcessDueReader, ThreadDueReader } from './due-reader';
import { Writer, WriterStats } from './write-ops';
import { Clock, SystemClock } from '../../domain/clock';
import { StoreHealth } from '../store-health';
import { assertSameFile, FileIdentity, identityOf } from './store-faults';
import { FileWatch } from './file-watch';
import { GuardedWriter } from './guarded-writer';
import { prepareReadStatements, ReadStatements } from './read-statements';
import type { ConcurrencyLimitRecord } from '../concurrency-store';
import { TenantSettings } from '../tenant-store';
import { RateLimit } from '../../domain/dispatch-limits';
import { LeaseGrant, MemberHeartbeat, MemberRecord, PartitionLease } from '../cluster-store';
import type { HeldTask } from '../../domain/overflow-policy';
import { CheckpointSaveResult } from '../checkpoint-store';
import { checkpointText } from '../../domain/checkpoint';
import { ProgressReport, progressRows } from '../../domain/progress';
import type { AttemptLog, AttemptLogAppend } from '../../domain/attempt-log';
import { CronRecord } from '../../domain/cron/cron-definition';
import { CronChanges, CronFireView, CronFiring, CronFiringResult, CronListQuery } from '../cron-store';

export interface SqliteStoreOptions {
  /**
   * Run writes on a dedicated thread (default: true for files; `:memory:` always writes in
   * process, since one in-memory database cannot be shared between threads).
   */
  writerThread?: boolean;
  /** Clock of the file watch's timer and of the faults' `since` (default: the system clock). */
  clock?: Clock;
  /** Interval of the file watch (ms, at most 1000; default 1000). */
  watchIntervalMs?: number;
}

/**
 * The embedded store: one SQLite file (better-sqlite3) in WAL mode with `synchronous=FULL`, so a
 * commit is on disk before any caller is answered. Writes go through group commit on one writing
 * connection (a dedicated thread by default, see {@link ThreadWriter}); reads run directly on the
 * caller's connection and see every acknowledged write. Every statement lives in `ops/`, one file
 * per atomic operation.
 *
 * Its {@link health} is watched ({@link FileWatch}: the file deleted or replaced under the service,
 * a volume with no space left) and fed by every failed write (full disk, I/O errors, a read-only
 * file, corruption). While a fault is in force every write is refused at once with
 * `STORE_UNAVAILABLE` (503), without touching the file; a recoverable fault ends when the watch's
 * probe write commits again.
 */
export class SqliteStore implements Store {
  readonly name = 'sqlite';
  readonly health = new StoreHealth();
  private db: Database.Database | null = null;
  private watch: FileWatch | null = null;
  private readonly clock: Clock;
  private writer: GuardedWriter | null = null;
  private aggregates: AggregateReader | null = null;
  /** File stores: a second aggregate thread, at normal priority, that only checkpoints. */
  private checkpoints: AggregateReader | null = null;
  /** The partition owners' window reads: their own thread for file stores (see due-reader.ts). */
  private dueReads: DueReader | null = null;
  private reads: ReadStatements | null = null;

  /**
   * @param file database path (`:memory:` for tests); its folder is created if missing (the service
   *   checks the path before: store-preflight.ts, `SQLITE_CREATE_DIR`)
   */
  constructor(
    private readonly file: string,
    private readonly options: SqliteStoreOptions = {},
  ) {
    this.clock = options.clock ?? new SystemClock();
  }

  async open(partitions: number): Promise<SchemaChange | null> {
    const inMemory = this.file === ':memory:';
    const threads = !inMemory && (this.options.writerThread ?? true);
    const { db, change } = openStoreFile(this.file, partitions, threads ? { readsCacheKib: MAIN_READS_CACHE_KIB } : {});
    this.db = db;
    const identity: FileIdentity | null = inMemory ? null : identityOf(this.file);
    const afterCommit = identity ? () => assertSameFile(this.file, identity) : undefined;
    const threadWriter = threads ? new ThreadWriter(this.file, identity) : null;
    // The writer's thread starts at the full young generation (young-generation.ts); the other
    // threads are made once it runs, so they do not.
    await threadWriter?.started();
    const inner: Writer = threadWriter ?? new InProcessWriter(db, afterCommit);
    this.writer = new GuardedWriter(inner, { file: this.file, identity, health: this.health, clock: this.clock });
    this.aggregates = threads ? new ThreadAggregateReader(this.file) : new InProcessAggregateReader(db);
    this.checkpoints = threads ? new ThreadAggregateReader(this.file, 0, 'SQLite checkpoints') : null;
    this.dueReads = threads ? new ThreadDueReader(this.file) : new InProcessDueReader(db);
    this.reads = prepareReadStatements(db);
    if (identity) {
      this.watch = new FileWatch({
        file: this.file,
        opened: identity,
        clock: this.clock,
        health: this.health,
        probe: () => inner.run('probeWrite', [this.clock.now()]),
        ...(this.options.watchIntervalMs !== undefined ? { intervalMs: this.options.watchIntervalMs } : {}),
      });
      this.watch.start();
    }
    return change;
  }

  async close(): Promise<void> {
    if (!this.db) return;
    await this.watch?.stop();
    this.watch = null;
    const { db, writer, aggregates, checkpoints, dueReads } = this;
    this.db = null;
    this.writer = null;
    this.aggregates = null;
    this.checkpoints = null;
    this.dueReads = null;
    this.reads = null;
    await Promise.all([writer?.close(), aggregates?.close(), checkpoints?.close(), dueReads?.close()]);
    db.close();
  }

  /**
   * A PASSIVE WAL checkpoint on a thread of its own at normal priority, so that the writer never
   * carries one inside a commit and none waits behind a scan of the (niced) aggregate thread
   * (bootstrap calls it every second; a no-op for stores writing in process).
   */
  async checkpoint(): Promise<void> {
    if (this.health.fault) return; // nothing to copy into a file that is gone or full
    await (this.checkpoints ?? this.agg).checkpoint().catch((err: unknown) => {
      throw this.w.failed(err);
    });
  }

  /** Group-commit statistics (commits, operations, largest batch) and the writer's young generation. */
  async commitStats(): Promise<WriterStats | null> {
    return this.writer ? this.writer.stats() : null;
  }

  /** The prepared reads; throws while the store is not open. */
  private get r(): ReadStatements {
    if (!this.reads) throw new Error('store is not open');
    return this.reads;
  }

  private get agg(): AggregateReader {
    if (!this.aggregates) throw new Error('store is not open');
    return this.aggregates;
  }

  private get w(): GuardedWriter {
    if (!this.writer) throw new Error('store is not open');
    return this.writer;
  }

  async ping(): Promise<boolean> {
    return this.db !== null && this.db.prepare('SELECT 1').pluck().get() === 1;
  }

  async insertTasks(tasks: NewTask[]): Promise<InsertResult[]> {
    return this.w.run('insertTasks', [tasks]);
  }

  async getTask(id: string): Promise<TaskRecord | null> {
    return this.r.tasks.getTask(id);
  }

  async getTaskStates(ids: readonly string[]): Promise<Map<string, TaskState>> {
    return this.r.taskStates(ids);
  }

  async getAttempts(id: string): Promise<AttemptRecord[]> {
    return this.r.tasks.getAttempts(id);
  }

  async listTasks(query: TaskListQuery): Promise<TaskPage> {
    return this.r.tasks.listTasks(query);
  }

  async loadDue(partition: number, until: number, limit: number): Promise<DueEntry[]> {
    if (!this.dueReads) throw new Error('store is not open');
    return this.dueReads.loadDue(partition, until, limit);
  }

  async markPending(ids: string[], now: number, epoch?: number): Promise<string[]> {
    return this.w.run('markPending', epoch === undefined ? [ids, now] : [ids, now, epoch]);
  }

  async claimTasks(
    ids: string[],
    workerId: string,
    now: number,
    leaseMs: number,
    epochs?: readonly number[],
    seqs?: readonly number[],
  ): Promise<ClaimedTask[]> {
    return this.w.run('claimTasks', [ids, workerId, now, leaseMs, epochs, seqs]);
  }

  async completeAttempts(completions: AttemptCompletion[], now: number): Promise<CompletionResult[]> {
    return this.w.run('completeAttempts', [completions, now]);
  }

  async cancelTask(id: string, now: number): Promise<CancelResult> {
    return this.w.run('cancelTask', [id, now]);
  }

  async updateWaitingTask(id: string, changes: UpdateWaitingChanges, now: number): Promise<UpdateWaitingResult> {
    return this.w.run('updateWaitingTask', [id, changes, now]);
  }

  async replayDead(id: string, now: number): Promise<DueEntry | null> {
    return this.w.run('replayDead', [id, now]);
  }

  async deleteDead(id: string): Promise<boolean> {
    return this.w.run('deleteDead', [id]);
  }

  async extendLeases(items: Array<{ taskId: string; attempt: number }>, until: number): Promise<number> {
    return (await this.heartbeatAttempts(items, until)).extended;
  }

  async heartbeatAttempts(items: Array<{ taskId: string; attempt: number }>, until: number): Promise<AttemptHeartbeat> {
    return this.w.run('heartbeatAttempts', [items, until]);
  }

  async findExpiredLeases(now: number, limit: number): Promise<OrphanedAttempt[]> {
    return this.r.findExpiredLeases(now, limit);
  }

  async auditScan(now: number, overdueBefore: number, limit: number): Promise<AuditScan> {
    return this.agg.auditScan(now, overdueBefore, limit);
  }

  async findOrphanedAttempts(limit: number): Promise<OrphanedAttempt[]> {
    return this.r.tasks.findOrphanedAttempts(limit);
  }

  async countByState(): Promise<Record<TaskState, number>> {
    return this.agg.countByState();
  }

  async purgeFinished(before: number, now: number, limit: number): Promise<{ tasks: number; idempotencyKeys: number }> {
    return this.w.run('purgeFinished', [before, now, limit]);
  }

  async createCron(cron: CronRecord): Promise<void> {
    return this.w.run('createCron', [cron]);
  }

  async getCron(id: string): Promise<CronRecord | null> {
    return this.r.crons.getCron(id);
  }

  async listCrons(query: CronListQuery): Promise<{ crons: CronRecord[]; nextCursor: string | null }> {
    return this.r.crons.listCrons(query);
  }

  async updateCron(id: string, changes: CronChanges, now: number): Promise<CronRecord | null> {
    return this.w.run('updateCron', [id, changes, now]);
  }

  async deleteCron(id: string): Promise<boolean> {
    return this.w.run('deleteCron', [id]);
  }

  async loadDueCrons(until: number, limit: number): Promise<CronRecord[]> {
    return this.r.crons.loadDueCrons(until, limit);
  }

  async fireCrons(firings: CronFiring[], now: number): Promise<CronFiringResult[]> {
    return this.w.run('fireCrons', [firings, now]);
  }

  async listCronFires(
    cronId: string,
    query: { limit: number; cursor?: string },
  ): Promise<{ fires: CronFireView[]; nextCursor: string | null }> {
    return this.r.crons.listCronFires(cronId, query);
  }

  async cronsWithQueuedInstances(limit: number): Promise<string[]> {
    return this.r.crons.cronsWithQueuedInstances(limit);
  }

  async releaseQueuedInstances(cronIds: string[], now: number): Promise<DueEntry[]> {
    return this.w.run('releaseQueuedInstances', [cronIds, now]);
  }

  async purgeCronFires(before: number, limit: number): Promise<number> {
    return this.w.run('purgeCronFires', [before, limit]);
  }

  async insertWorkflow(workflow: NewWorkflow): Promise<number[]> {
    return this.w.run('insertWorkflow', [workflow]);
  }

  async getWorkflow(id: string): Promise<WorkflowRecord | null> {
    return this.r.workflows.getWorkflow(id);
  }

  async getWorkflowTasks(id: string): Promise<WorkflowTaskSummary[]> {
    return this.r.workflows.getWorkflowTasks(id);
  }

  async listWorkflows(query: WorkflowListQuery): Promise<WorkflowPage> {
    return this.r.workflows.listWorkflows(query);
  }

  async cancelWorkflow(id: string, now: number): Promise<WorkflowCancelResult> {
    return this.w.run('cancelWorkflow', [id, now]);
  }

  async saveCheckpoint(taskId: string, attempt: number, value: unknown, now: number): Promise<CheckpointSaveResult> {
    return this.w.run('saveCheckpoint', [taskId, attempt, checkpointText(value), now]);
  }

  async reportProgress(reports: ProgressReport[], now: number): Promise<number> {
    if (reports.length === 0) return 0;
    const rows = progressRows(reports);
    return this.w.run('reportProgress', [rows, now]);
  }

  async appendAttemptLogs(logs: AttemptLogAppend[], now: number): Promise<number> {
    if (logs.length === 0) return 0;
    return this.w.run('appendAttemptLogs', [logs, now]);
  }

  async getAttemptLog(taskId: string, attempt: number): Promise<AttemptLog> {
    return this.r.attemptLog(taskId, attempt);
  }

  async putTenantSettings(settings: TenantSettings): Promise<void> {
    return this.w.run('putTenantSettings', [settings]);
  }

  async deleteTenantSettings(tenantId: string): Promise<boolean> {
    return this.w.run('deleteTenantSettings', [tenantId]);
  }

  async listTenantSettings(): Promise<TenantSettings[]> {
    return this.r.tenants.listTenantSettings();
  }

  async putTaskTypeLimit(taskType: string, limit: RateLimit | null, now: number): Promise<void> {
    return this.w.run('putTaskTypeLimit', [taskType, limit, now]);
  }

  async listTaskTypeLimits(): Promise<Array<{ taskType: string; limit: RateLimit }>> {
    return this.r.tenants.listTaskTypeLimits();
  }

  async putConcurrencyLimit(key: string, maxRunning: number | null, now: number): Promise<void> {
    return this.w.run('putConcurrencyLimit', [key, maxRunning, now]);
  }

  async listConcurrencyLimits(): Promise<ConcurrencyLimitRecord[]> {
    return this.r.concurrency.listConcurrencyLimits();
  }

  async countWaitingByTenant(): Promise<Record<string, number>> {
    return this.agg.countWaitingByTenant();
  }

  // Overflow part (overflow-store.ts).

  async listOverflow(limit: number, excludeTenants?: readonly string[]): Promise<HeldTask[]> {
    return this.r.listOverflow(limit, excludeTenants);
  }

  async countOverflowByTenant(): Promise<Record<string, number>> {
    return this.r.countOverflow();
  }

  async releaseOverflow(ids: readonly string[], now: number): Promise<DueEntry[]> {
    return this.w.run('releaseOverflow', [ids, now]);
  }

  // Cluster part (cluster-store.ts). The embedded profile never leases; these exist so the
  // contract and its conformance tests hold on every adapter.

  async heartbeatMember(
    member: { memberId: string; address?: string | null; instance: string },
    now: number,
    ttlMs: number,
  ): Promise<MemberHeartbeat> {
    return this.w.run('heartbeatMember', [member, now, ttlMs]);
  }

  async listLiveMembers(now: number): Promise<MemberRecord[]> {
    return this.r.cluster.listLiveMembers(now);
  }

  async removeMember(memberId: string, instance?: string): Promise<boolean> {
    return this.w.run('removeMember', [memberId, instance]);
  }

  async acquireLease(partition: number, owner: string, now: number, ttlMs: number): Promise<LeaseGrant> {
    return this.w.run('acquireLease', [partition, owner, now, ttlMs]);
  }

  async renewLease(partition: number, owner: string, epoch: number, now: number, ttlMs: number): Promise<PartitionLease | null> {
    return this.w.run('renewLease', [partition, owner, epoch, now, ttlMs]);
  }

  async releaseLease(partition: number, owner: string, epoch: number): Promise<boolean> {
    return this.w.run('releaseLease', [partition, owner, epoch]);
  }

  async listLeases(): Promise<PartitionLease[]> {
    return this.r.cluster.listLeases();
  }

  async fencePartition(partition: number, epoch: number): Promise<number> {
    return this.w.run('fencePartition', [partition, epoch]);
  }
}
