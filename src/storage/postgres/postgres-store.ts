import { CronRecord } from '../../domain/cron/cron-definition';
import { AttemptRecord, ClaimedTask, DueEntry, NewTask, TaskRecord, TaskState } from '../../domain/task';
import { CronChanges, CronFireView, CronFiring, CronFiringResult, CronListQuery } from '../cron-store';
import {
  AttemptCompletion,
  AttemptHeartbeat,
  AuditScan,
  CancelResult,
  CompletionResult,
  InsertResult,
  OrphanedAttempt,
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
import { updateWaitingTask } from './ops/update-waiting-task';
import { countWaitingByTenant, listTaskTypeLimits, listTenantSettings, putTaskTypeLimit, putTenantSettings } from './ops/tenant-settings';
import { listConcurrencyLimits, putConcurrencyLimit } from './ops/concurrency-limits';
import type { ConcurrencyLimitRecord } from '../concurrency-store';
import { TenantSettings } from '../tenant-store';
import { RateLimit } from '../../domain/dispatch-limits';
import { LeaseGrant, MemberHeartbeat, MemberRecord, PartitionLease } from '../cluster-store';
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

import type { Pool } from 'pg';
import { StoreHealth, storeUnavailable } from '../store-health';
import { Clock, SystemClock } from '../../domain/clock';
import { SchemaChange, StoreConfigError } from '../store';
import { boundedDb, Db } from './db';
import { openPool, serverOf } from './connection';
import { migrate, SCHEMA_VERSION } from './migrations';
import { postgresFaultOf } from './pg-faults';
import { ConnectionWatch, PROBE_TIMEOUT_MS, ProbeConnection } from './connection-watch';
import { OneStatement, WriteLane, WriteOp, WriteQueue } from './write-queue';

/** The time of a fault's `since` when the store is given no clock. */
const SYSTEM_CLOCK = new SystemClock();

/** Settings of a {@link PostgresStore}. */
export interface PostgresStoreOptions {
  /** Schema of the store's tables (created at open); default `public`. Tests use one per store. */
  schema?: string;
  /** Connections for reads and lease and member writes (default 8); the two writing connections come on top. */
  poolSize?: number;
  /**
   * The scheduler's clock: a claim that waited in the write queue starts its attempt and lease at
   * the later of its `now` and this clock when it runs; also the time of a fault's `since`.
   */
  clock?: Pick<Clock, 'now'>;
  /** Timers of the connection watch (connection-watch.ts); default: the system clock. */
  timers?: Clock;
  /** Interval of the connection watch while healthy (ms); default 2000. */
  watchIntervalMs?: number;
}

/**
 * The PostgreSQL store (cluster mode: several service processes share one database; partitions are
 * owned through leases with fencing epochs, as with MongoDB). Same contract as the SQLite store,
 * checked by the same conformance suite. Tables mirror SQLite's (migrations/), every operation in
 * `ops/` is one file with its header (inputs, outputs, guarantee), and writes go through group
 * commit on one connection ({@link WriteQueue}): a caller is answered after its transaction's COMMIT
 * returned with `synchronous_commit=on`. Reads run on the pool and see every acknowledged write.
 *
 * Its {@link health}: a lost connection (server down, unreachable, restarting) is a recoverable
 * `connection_lost` fault; every call that meets it rejects with `StoreUnavailableError` (503
 * `STORE_UNAVAILABLE`), and the next write or read that succeeds ends it. A {@link ConnectionWatch}
 * sees it without any call (a `SELECT 1` on a connection of its own every 2 s, at once when the
 * server drops a connection) and ends it within about a second of the server answering again; the
 * pool and the writer make new connections then by themselves.
 */
export class PostgresStore implements Store {
  readonly name = 'postgres';
  readonly health = new StoreHealth();
  private pool: Pool | null = null;
  private writes: WriteQueue | null = null;
  /**
   * The writes of running attempts (completions, lease extensions, checkpoints, progress, fences:
   * the `first` lane) on a connection of their own, in transactions of their own, beside the other
   * writes' group commit: they are compare-and-sets on attempts already claimed (or fences), so
   * running them beside queued claims, inserts and due marks changes no outcome a caller relies on,
   * which is why the one queue already let them go first; two connections commit twice as often.
   */
  private attemptWrites: WriteQueue | null = null;
  private watch: ConnectionWatch | null = null;
  private probe: ProbeConnection | null = null;
  /** The claims gathered per group commit (claim-groups.ts). */
  private readonly claims = new ClaimGroups(
    (op, oneStatement) => this.write(op, 'ordered', oneStatement),
    (now) => Math.max(now, this.options.clock?.now() ?? now),
  );
  private readonly target: string;
  private readonly schema: string;

  /**
   * @param url connection string (`POSTGRES_URL`), e.g. `postgres://scheduler@127.0.0.1:5432/scheduler`
   */
  constructor(
    private readonly url: string,
    private readonly options: PostgresStoreOptions = {},
  ) {
    this.target = serverOf(url);
    this.schema = options.schema ?? 'public';
  }

  /**
   * Connects, migrates (under an advisory lock: nodes may start together) and records the
   * partition count on first use.
   * @throws StoreConfigError when the database was created with another partition count or by a newer build
   * @throws StoreUnavailableError when the server cannot be reached
   */
  async open(partitions: number): Promise<SchemaChange | null> {
    if (this.pool) return null;
    // The two writing connections are held for good: they come on top of the connections for reads.
    const pool = openPool(this.url, { schema: this.schema, max: (this.options.poolSize ?? 8) + 2 });
    // An idle connection's error (the pool has discarded it): the watch looks at the server at once.
    pool.on('error', () => this.watch?.checkSoon());
    let change: SchemaChange | null = null;
    try {
      const client = await pool.connect();
      // A checked-out connection the server ends emits 'error' (no pool listener then): its query
      // rejects anyway, and an unhandled 'error' would end the process.
      client.on('error', () => undefined);
      try {
        const { from, applied } = await migrate(client, this.schema);
        if (applied.length > 0) change = { from, to: SCHEMA_VERSION, applied };
        await client.query(`INSERT INTO meta (key, value) VALUES ('partitions', $1) ON CONFLICT (key) DO NOTHING`, [String(partitions)]);
        const { rows } = await client.query<{ value: string }>(`SELECT value FROM meta WHERE key = 'partitions'`);
        const stored = rows[0]?.value;
        if (stored !== undefined && Number(stored) !== partitions) {
          throw new StoreConfigError(
            `invalid configuration: partitions (env PARTITIONS): the PostgreSQL store ${this.target} (schema ${this.schema}) was created with ${stored} partitions, not ${partitions}`,
          );
        }
      } finally {
        client.release();
      }
    } catch (err) {
      await pool.end().catch(() => undefined);
      const fault = postgresFaultOf(err, this.target, this.clock.now());
      if (fault) throw storeUnavailable(fault);
      throw err;
    }
    this.pool = pool;
    const queueOptions = {
      isConnectionError: (err: unknown) => postgresFaultOf(err, this.target, 0) !== null,
      onCommit: () => this.health.recovered(),
      onDropped: () => this.watch?.checkSoon(),
    };
    this.writes = new WriteQueue(pool, queueOptions);
    this.attemptWrites = new WriteQueue(pool, queueOptions);
    const timers = this.options.timers ?? SYSTEM_CLOCK;
    this.probe = new ProbeConnection(this.url, () => this.watch?.checkSoon());
    const probe = this.probe;
    this.watch = new ConnectionWatch({
      clock: {
        now: () => this.clock.now(),
        setTimeout: (fn, ms) => timers.setTimeout(fn, ms),
        clearTimeout: (h) => timers.clearTimeout(h),
      },
      health: this.health,
      target: this.target,
      probe: () => probe.check(),
      ...(this.options.watchIntervalMs !== undefined ? { intervalMs: this.options.watchIntervalMs } : {}),
    });
    this.watch.start();
    return change;
  }

  /** Answers every write issued before it, then disconnects. Idempotent. */
  async close(): Promise<void> {
    const { pool, writes, attemptWrites, watch, probe } = this;
    if (!pool) return;
    this.pool = null;
    this.writes = null;
    this.attemptWrites = null;
    this.watch = null;
    this.probe = null;
    await watch?.stop();
    await probe?.close();
    await Promise.all([writes?.close(), attemptWrites?.close()]);
    await pool.end();
  }

  /**
   * Group-commit statistics (transactions, operations in them, largest batch; `bare`: the
   * transactions that were one statement without BEGIN/COMMIT, write-queue.ts).
   */
  async commitStats(): Promise<{ commits: number; bare: number; operations: number; largestBatch: number } | null> {
    if (!this.writes || !this.attemptWrites) return null;
    const [a, b] = [this.writes.stats, this.attemptWrites.stats];
    return {
      commits: a.commits + b.commits,
      bare: a.bare + b.bare,
      operations: a.operations + b.operations,
      largestBatch: Math.max(a.largestBatch, b.largestBatch),
    };
  }

  private get clock(): Pick<Clock, 'now'> {
    return this.options.clock ?? SYSTEM_CLOCK;
  }

  /**
   * `call`'s result; a connection error becomes the `connection_lost` fault and its 503. A success
   * ends that fault; a committed write (`wrote`) ends any recoverable one (a read says nothing
   * about a full disk).
   */
  private watched<T>(call: Promise<T>, wrote: boolean): Promise<T> {
    return call.then(
      (result) => {
        if (wrote || this.health.fault?.kind === 'connection_lost') this.health.recovered();
        return result;
      },
      (err: unknown) => {
        const fault = postgresFaultOf(err, this.target, this.clock.now());
        if (!fault) throw err;
        this.health.report(fault);
        throw storeUnavailable(this.health.fault ?? fault);
      },
    );
  }

  /** Queues a write in the group commit (see {@link WriteQueue}). */
  private write<T>(op: WriteOp<T>, lane: WriteLane = 'ordered', oneStatement?: OneStatement): Promise<T> {
    const queue = lane === 'first' ? this.attemptWrites : this.writes;
    if (!queue) return Promise.reject(new Error('store is not open'));
    return this.watched(queue.run(op, lane, oneStatement), true);
  }

  /** A read on the pool. */
  private read<T>(op: (db: Db) => Promise<T>): Promise<T> {
    if (!this.pool) return Promise.reject(new Error('store is not open'));
    return this.watched(op(boundedDb(this.pool)), false);
  }

  /** A one-statement write on the pool, outside the group commit (lease and member writes). */
  private direct<T>(op: (db: Db) => Promise<T>): Promise<T> {
    if (!this.pool) return Promise.reject(new Error('store is not open'));
    return this.watched(op(boundedDb(this.pool)), true);
  }

  async ping(): Promise<boolean> {
    if (!this.pool) return false;
    try {
      const { rows } = await boundedDb(this.pool, PROBE_TIMEOUT_MS).query<{ one: number }>('SELECT 1 AS one');
      return rows[0]?.one === 1;
    } catch {
      return false;
    }
  }

  async insertTasks(tasks: NewTask[]): Promise<InsertResult[]> {
    return this.write((db) => insertTasks(db, tasks));
  }

  async getTask(id: string): Promise<TaskRecord | null> {
    return this.read((db) => getTask(db, id));
  }

  async getTaskStates(ids: readonly string[]): Promise<Map<string, TaskState>> {
    return this.read((db) => getTaskStates(db, ids));
  }

  async getAttempts(id: string): Promise<AttemptRecord[]> {
    return this.read((db) => getAttempts(db, id));
  }

  async listTasks(query: TaskListQuery): Promise<TaskPage> {
    return this.read((db) => listTasks(db, query));
  }

  async loadDue(partition: number, until: number, limit: number): Promise<DueEntry[]> {
    return this.read((db) => loadDue(db, partition, until, limit));
  }

  async markPending(ids: string[], now: number, epoch?: number): Promise<string[]> {
    return this.write((db) => markPending(db, ids, now, epoch), 'deferred');
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
    return this.write(
      (db, inTransaction) => completeAttempts(db, completions, now, inTransaction),
      'first',
      () => completionIsOneStatement(completions),
    );
  }

  async cancelTask(id: string, now: number): Promise<CancelResult> {
    return this.write((db) => cancelTask(db, id, now));
  }

  async updateWaitingTask(id: string, changes: UpdateWaitingChanges, now: number): Promise<UpdateWaitingResult> {
    return this.write((db) => updateWaitingTask(db, id, changes, now));
  }

  async replayDead(id: string, now: number): Promise<DueEntry | null> {
    return this.write((db) => replayDead(db, id, now));
  }

  async deleteDead(id: string): Promise<boolean> {
    return this.write((db) => deleteDead(db, id));
  }

  async extendLeases(items: Array<{ taskId: string; attempt: number }>, until: number): Promise<number> {
    return (await this.heartbeatAttempts(items, until)).extended;
  }

  async heartbeatAttempts(items: Array<{ taskId: string; attempt: number }>, until: number): Promise<AttemptHeartbeat> {
    return this.write((db) => heartbeatAttempts(db, items, until), 'first');
  }

  async saveCheckpoint(taskId: string, attempt: number, value: unknown, now: number): Promise<CheckpointSaveResult> {
    const text = checkpointText(value);
    return this.write((db) => saveCheckpoint(db, taskId, attempt, text, now), 'first');
  }

  async reportProgress(reports: ProgressReport[], now: number): Promise<number> {
    if (reports.length === 0) return 0;
    const rows = progressRows(reports);
    return this.write((db) => reportProgress(db, rows, now));
  }

  async appendAttemptLogs(logs: AttemptLogAppend[], _now: number): Promise<number> {
    if (logs.length === 0) return 0;
    return this.write((db) => appendAttemptLogs(db, logs));
  }

  async getAttemptLog(taskId: string, attempt: number): Promise<AttemptLog> {
    return this.read((db) => getAttemptLog(db, taskId, attempt));
  }

  async findExpiredLeases(now: number, limit: number): Promise<OrphanedAttempt[]> {
    return this.read((db) => findExpiredLeases(db, now, limit));
  }

  async auditScan(now: number, overdueBefore: number, limit: number): Promise<AuditScan> {
    return this.read((db) => auditScan(db, now, overdueBefore, limit));
  }

  async findOrphanedAttempts(limit: number): Promise<OrphanedAttempt[]> {
    return this.read((db) => findOrphanedAttempts(db, limit));
  }

  async countByState(): Promise<Record<TaskState, number>> {
    return this.read((db) => countByState(db));
  }

  async purgeFinished(before: number, now: number, limit: number): Promise<{ tasks: number; idempotencyKeys: number }> {
    return this.write((db) => purgeFinished(db, before, now, limit));
  }

  async createCron(cron: CronRecord): Promise<void> {
    return this.write((db) => createCron(db, cron));
  }

  async getCron(id: string): Promise<CronRecord | null> {
    return this.read((db) => getCron(db, id));
  }

  async listCrons(query: CronListQuery): Promise<{ crons: CronRecord[]; nextCursor: string | null }> {
    return this.read((db) => listCrons(db, query));
  }

  async updateCron(id: string, changes: CronChanges, now: number): Promise<CronRecord | null> {
    return this.write((db) => updateCron(db, id, changes, now));
  }

  async deleteCron(id: string): Promise<boolean> {
    return this.write((db) => deleteCron(db, id));
  }

  async loadDueCrons(until: number, limit: number): Promise<CronRecord[]> {
    return this.read((db) => loadDueCrons(db, until, limit));
  }

  async fireCrons(firings: CronFiring[], now: number): Promise<CronFiringResult[]> {
    return this.write((db) => fireCrons(db, firings, now));
  }

  async listCronFires(
    cronId: string,
    query: { limit: number; cursor?: string },
  ): Promise<{ fires: CronFireView[]; nextCursor: string | null }> {
    return this.read((db) => listCronFires(db, cronId, query));
  }

  async cronsWithQueuedInstances(limit: number): Promise<string[]> {
    return this.read((db) => cronsWithQueuedInstances(db, limit));
  }

  async releaseQueuedInstances(cronIds: string[], now: number): Promise<DueEntry[]> {
    return this.write((db) => releaseQueuedInstances(db, cronIds, now));
  }

  async purgeCronFires(before: number, limit: number): Promise<number> {
    return this.write((db) => purgeCronFires(db, before, limit));
  }
  async putTenantSettings(settings: TenantSettings): Promise<void> {
    return this.write((db) => putTenantSettings(db, settings));
  }

  async deleteTenantSettings(tenantId: string): Promise<boolean> {
    return this.write((db) => deleteTenantSettings(db, tenantId));
  }

  async listTenantSettings(): Promise<TenantSettings[]> {
    return this.read((db) => listTenantSettings(db));
  }

  async putTaskTypeLimit(taskType: string, limit: RateLimit | null, now: number): Promise<void> {
    return this.write((db) => putTaskTypeLimit(db, taskType, limit, now));
  }

  async listTaskTypeLimits(): Promise<Array<{ taskType: string; limit: RateLimit }>> {
    return this.read((db) => listTaskTypeLimits(db));
  }

  async putConcurrencyLimit(key: string, maxRunning: number | null, now: number): Promise<void> {
    return this.write((db) => putConcurrencyLimit(db, key, maxRunning, now));
  }

  async listConcurrencyLimits(): Promise<ConcurrencyLimitRecord[]> {
    return this.read((db) => listConcurrencyLimits(db));
  }

  async countWaitingByTenant(): Promise<Record<string, number>> {
    return this.read((db) => countWaitingByTenant(db));
  }

  // Workflows (docs/DESIGN.md §8): every operation that ends a workflow task keeps its workflow
  // consistent in the same transaction (ops/workflow-progress.ts).
  async insertWorkflow(workflow: NewWorkflow): Promise<number[]> {
    return this.write((db) => insertWorkflow(db, workflow));
  }

  async getWorkflow(id: string): Promise<WorkflowRecord | null> {
    return this.read((db) => getWorkflow(db, id));
  }

  async getWorkflowTasks(id: string): Promise<WorkflowTaskSummary[]> {
    return this.read((db) => getWorkflowTasks(db, id));
  }

  async listWorkflows(query: WorkflowListQuery): Promise<WorkflowPage> {
    return this.read((db) => listWorkflows(db, query));
  }

  async cancelWorkflow(id: string, now: number): Promise<WorkflowCancelResult> {
    return this.write((db) => cancelWorkflow(db, id, now));
  }

  // Cluster part (cluster-store.ts). Lease and member writes never wait behind the task writes (a
  // renewal queued behind a large batch can miss its lease's expiry): each is one statement, a
  // compare-and-set on one row of `partition_leases` or `members`, run on a pooled connection in a
  // transaction of its own; their order with the task writes does not matter.

  async heartbeatMember(
    member: { memberId: string; address?: string | null; instance: string },
    now: number,
    ttlMs: number,
  ): Promise<MemberHeartbeat> {
    return this.direct((db) => heartbeatMember(db, member, now, ttlMs));
  }

  async listLiveMembers(now: number): Promise<MemberRecord[]> {
    return this.read((db) => listLiveMembers(db, now));
  }

  async removeMember(memberId: string, instance?: string): Promise<boolean> {
    return this.direct((db) => removeMember(db, memberId, instance));
  }

  async acquireLease(partition: number, owner: string, now: number, ttlMs: number): Promise<LeaseGrant> {
    return this.direct((db) => acquireLease(db, partition, owner, now, ttlMs));
  }

  async renewLease(partition: number, owner: string, epoch: number, now: number, ttlMs: number): Promise<PartitionLease | null> {
    return this.direct((db) => renewLease(db, partition, owner, epoch, now, ttlMs));
  }

  async releaseLease(partition: number, owner: string, epoch: number): Promise<boolean> {
    return this.direct((db) => releaseLease(db, partition, owner, epoch));
  }

  async listLeases(): Promise<PartitionLease[]> {
    return this.read((db) => listLeases(db));
  }

  /** Queued with the task writes: a fence must land after the writes this store issued before it. */
  async fencePartition(partition: number, epoch: number): Promise<number> {
    return this.write((db) => fencePartition(db, partition, epoch), 'first');
  }

  // Overflow part (overflow-store.ts).
  async listOverflow(limit: number, excludeTenants?: readonly string[]): Promise<HeldTask[]> {
    return this.read((db) => listOverflow(db, limit, excludeTenants));
  }

  async countOverflowByTenant(): Promise<Record<string, number>> {
    return this.read((db) => countOverflowByTenant(db));
  }

  async releaseOverflow(ids: readonly string[], now: number): Promise<DueEntry[]> {
    return this.write((db) => releaseOverflow(db, ids, now));
  }
}
