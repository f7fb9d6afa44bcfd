import { StartupError } from '../domain/startup-error';
import { NewWorkflow, WorkflowRecord, WorkflowStatus, WorkflowTaskSummary } from '../domain/workflow';
import { Priority, AttemptRecord, ClaimedTask, DueEntry, NewTask, TaskRecord, TaskState } from '../domain/task';
import type { AttemptCompletion, OrphanedAttempt } from '../domain/attempt-completion';
import type { AttemptLogStore } from './attempt-log-store';
import type { CheckpointStore } from './checkpoint-store';
import type { ClusterStore } from './cluster-store';
import type { CronStore } from './cron-store';
import type { TenantStore } from './tenant-store';
import type { OverflowStore } from './overflow-store';
import type { ConcurrencyStore } from './concurrency-store';
import type { StoreHealth } from './store-health';

export type { AttemptCompletion, OrphanedAttempt };

/** Which RUNNING attempts {@link Store.findOrphanedAttempts} reads. */
export interface OrphanSearch {
  /** False: not the attempts of external consumers (worker ids `external:…`, `http:…`). Default true. */
  external?: boolean;
}

/**
 * `name` of the error `insertTasks` rejects with when an idempotency key is held by a different
 * request, or by the same request whose task was deleted since: an IdempotencyKeyConflict
 * (./idempotency-conflict.ts), whose `details` are `{taskId, tenantId, key, taskDeleted?}`.
 */
export const IDEMPOTENCY_CONFLICT = 'IdempotencyConflict';

/** A schema change made by {@link Store.open}: versions before and after, migrations applied in order. */
export interface SchemaChange {
  from: number;
  to: number;
  applied: string[];
}

/** What {@link Store.auditScan} finds. */
export interface AuditScan {
  /** Waiting tasks that should have run already (oldest first: due time, then submission order; at most the limit). */
  overdue: DueEntry[];
  overdueTotal: number;
  /** RUNNING attempts whose lease has ended (no heartbeat). */
  expiredLeases: Array<{ taskId: string; attempt: number; workerId: string | null; leaseExpiresAt: number }>;
  expiredLeasesTotal: number;
  /**
   * BLOCKED workflow tasks whose upstream tasks are all terminal: "in limbo", they would wait
   * forever. Release and failure propagation run in the transaction that ends the upstream, so
   * this must always be empty; the audit reports it so a broken invariant is seen.
   */
  blockedLimbo: string[];
  blockedLimboTotal: number;
}

/** An idempotency key held now (`Store.getIdempotencyKeys`): the task it stands for and the request's hash. */
export interface HeldIdempotencyKey {
  taskId: string;
  requestHash: string;
}

/** Per submitted task: the id that stands for it. */
export interface InsertResult {
  taskId: string;
  /** True when an earlier task with the same idempotency key and request stands for it. */
  replayed: boolean;
  /**
   * The stored task's sequence number, increasing in submission order (the order of waiting tasks
   * with the same due time and priority); 0 for a replay, whose task was stored earlier. A task the
   * MongoDB adapter adopts (`taskId` is not the submitted id) answers the number reserved for it
   * here, which is not the stored one if a dead call stored the task: read the task for that.
   */
  seq: number;
}

/** Filter and page of {@link Store.listTasks}. Newest first. */
export interface TaskListQuery {
  status?: TaskState;
  taskType?: string;
  queue?: string;
  tenantId?: string;
  /**
   * Only tasks submitted with this idempotency key (exact match). Not indexed: a scan, bounded by
   * `limit`, meant for an operator's search (the dashboard), not for a hot path.
   */
  idempotencyKey?: string;
  /** Only tasks that finished at or after this instant (epoch ms). */
  completedSince?: number;
  /** 1..1000 */
  limit: number;
  /** Opaque cursor from a previous page. */
  cursor?: string;
}

export interface TaskPage {
  tasks: TaskRecord[];
  nextCursor: string | null;
}

/** Result of applying one {@link AttemptCompletion}. */
export interface CompletionResult {
  taskId: string;
  /** False when the compare-and-set on (id, attempt, RUNNING) failed: stale or duplicate. */
  applied: boolean;
  /** The state the task is in now (after the write, or as found). */
  state: TaskState | null;
  /** The task's due entry when it waits again (RETRYING, or PENDING for a retry due at once); null otherwise. */
  entry: DueEntry | null;
  taskType: string | null;
  /**
   * Workflow tasks this completion released from BLOCKED (their last unmet dependency succeeded),
   * now PENDING or SCHEDULED: hand them to their partition owners. Absent or empty otherwise.
   */
  released?: DueEntry[];
}

/** Changes to a task that has not started its next attempt ({@link Store.updateWaitingTask}). */
export interface UpdateWaitingChanges {
  /** New start time (epoch ms); null means now. Absent: unchanged. */
  scheduledAt?: number | null;
  priority?: Priority;
  /** New payload. Absent: unchanged. */
  payload?: unknown;
}

/** Result of {@link Store.updateWaitingTask}. */
export type UpdateWaitingResult =
  { kind: 'updated'; task: TaskRecord; entry: DueEntry | null } | { kind: 'conflict'; task: TaskRecord } | { kind: 'not_found' };

/** Answer of {@link Store.heartbeatAttempts}. */
export interface AttemptHeartbeat {
  /** How many leases were extended (attempts still RUNNING). */
  extended: number;
  /** Extended attempts whose task has a cancel requested: their handlers must be aborted. */
  cancelRequested: Array<{ taskId: string; attempt: number }>;
}

/** Result of {@link Store.cancelTask}. */
export type CancelResult =
  | { kind: 'cancelled'; task: TaskRecord }
  | { kind: 'cancelling'; task: TaskRecord }
  | { kind: 'conflict'; task: TaskRecord }
  | { kind: 'not_found' };

/**
 * The storage contract every adapter implements (SQLite now, MongoDB in cluster mode) and the
 * conformance suite in `test/storage/` checks. Rules for every method:
 * - `now` is passed in (epoch ms); adapters never read the clock.
 * - A returned promise resolves only after the write is durable (committed; group commit may
 *   share one commit between many callers).
 * - State changes are compare-and-set on the expected state (and attempt), never blind writes.
 */
export interface Store extends CronStore, TenantStore, ConcurrencyStore, ClusterStore, OverflowStore, CheckpointStore, AttemptLogStore {
  /** Human name of the adapter (logs, /readyz). */
  readonly name: string;

  /**
   * Opens the store, runs pending migrations and records the partition count on first use.
   * @returns the schema change it made (`from` 0: a new store), or null when there was none
   *   (MongoDB: always null; its indexes are ensured at every open, without versioned migrations)
   * @throws StoreConfigError when `partitions` differs from the count the store was created with,
   *   or the store was written by a newer version (a schema this build does not know)
   */
  open(partitions: number): Promise<SchemaChange | null>;

  /** Flushes pending writes and closes. Idempotent. */
  close(): Promise<void>;

  /** True when the store answers a trivial read. */
  ping(): Promise<boolean>;

  /**
   * What the adapter knows of its ability to make writes durable now (store-health.ts): SQLite
   * watches its file and its failed writes, MongoDB its connection. While a fault is in force
   * writes reject with `StoreUnavailableError` (503 `STORE_UNAVAILABLE`), never a generic error.
   */
  readonly health: StoreHealth;

  /**
   * Inserts new tasks (SCHEDULED or PENDING) atomically: all or none. A task whose idempotency key
   * (per tenant) is held by an earlier task with the same request hash is not inserted: its result
   * names the earlier task (`replayed: true`). Keys past `expiresAt` are released at that moment.
   * @throws IdempotencyKeyConflict (whole list rolled back) when a held key has another hash, or
   *   the same hash but its task no longer exists (`taskDeleted`: a dead-letter delete or retention
   *   purge; the request is neither replayed with a missing task nor run again)
   */
  insertTasks(tasks: NewTask[]): Promise<InsertResult[]>;

  getTask(id: string): Promise<TaskRecord | null>;

  /**
   * The idempotency keys held now (read only, no write): per key, in order, the task it stands for
   * and its request's hash, or null when the key is not held (absent, or released: `expiresAt` at
   * or before `now`, epoch ms). Submission backpressure uses it to answer a repeat of an
   * acknowledged request as a replay while it refuses new tasks (services/submit-tasks.ts). The
   * task itself may have been deleted since (read it). MongoDB: a key whose batch is still being
   * stored is null, as `insertTasks` answers no replay from it either.
   */
  getIdempotencyKeys(keys: ReadonlyArray<{ tenantId: string; key: string }>, now: number): Promise<Array<HeldIdempotencyKey | null>>;

  /**
   * The states of many tasks in one read (the `?wait=` re-check): id → state for each id that
   * exists; absent ids are not in the map. Any number of ids, duplicates allowed.
   */
  getTaskStates(ids: readonly string[]): Promise<Map<string, TaskState>>;

  /** Attempt history of a task, oldest first. */
  getAttempts(id: string): Promise<AttemptRecord[]>;

  listTasks(query: TaskListQuery): Promise<TaskPage>;

  /**
   * Waiting tasks (SCHEDULED, PENDING, RETRYING) of one partition with `due_at <= until`, in
   * (due_at, seq) order, at most `limit`: a range scan on the (partition, due_at) index.
   */
  loadDue(partition: number, until: number, limit: number): Promise<DueEntry[]>;

  /**
   * SCHEDULED/RETRYING → PENDING for the given ids whose `due_at <= now` (transition `due`).
   * Returns the ids now PENDING (already-PENDING ids count; cancelled ones, and ones a claim
   * already took, do not).
   *
   * `epoch` (cluster mode: the caller's lease epoch of the ids' partition, a fencing token): the
   * compare-and-set also requires the task's fencing epoch to be `<= epoch` and sets it to
   * `epoch`; an id whose epoch is higher (a newer owner fenced the partition) is neither changed
   * nor returned. Absent (embedded mode): no fencing.
   */
  markPending(ids: string[], now: number, epoch?: number): Promise<string[]>;

  /**
   * PENDING → RUNNING (transition `claim`) for each id, starting a new attempt on `workerId` with
   * a lease until `now + leaseMs`. Returns what the worker needs for every id whose claim won.
   * An adapter whose writes can wait in a queue (MongoDB) and that was given the scheduler's clock
   * starts the attempt, and its lease, at the later of `now` and that clock when the write runs:
   * a claim that waited longer than `leaseMs` is not born with an expired lease.
   * A SCHEDULED or RETRYING task that is due (`due_at <= now`) is claimed too (transitions `due`
   * and `claim` in one write): the partition owner hands due tasks to the dispatcher at once and
   * marks only those still waiting after a delay, so a claim usually comes first. Never a task
   * not yet due.
   *
   * `epochs` (cluster mode): the fencing token for each id, parallel to `ids` (the lease epoch
   * the caller holds for that id's partition). The compare-and-set also requires the task's
   * fencing epoch to be `<= epochs[i]` and sets it; a negative token (partition not held) never
   * claims. Absent (embedded mode): no fencing.
   *
   * `seqs`: each id's `seq` as its due entry has it, parallel to `ids`, a lookup hint. An adapter
   * may find the row by it (SQLite: the rowid, one B-tree search instead of the id index's and then
   * the table's), but the id must still match, and a hint that finds no claimable row falls back
   * to the id: a wrong or stale hint changes the cost, never the result.
   */
  claimTasks(
    ids: string[],
    workerId: string,
    now: number,
    leaseMs: number,
    epochs?: readonly number[],
    seqs?: readonly number[],
  ): Promise<ClaimedTask[]>;

  /**
   * Optional (embedded SQLite only; the dispatcher claims ahead only on a store that has it, and
   * never in cluster mode): the transition `claim` taken before the due time, for tasks the
   * partition owners hand out up to `claimAheadMs` early. Like {@link claimTasks} without fencing,
   * except that a SCHEDULED or RETRYING task due by `until` (epoch ms, >= now) is claimed, its
   * row's start is left empty (the attempt has not started: the dispatcher holds it until its due
   * time and its completion brings the instant it was sent, `AttemptCompletion.startedAt`), and
   * its lease runs to max(due time, now) + leaseMs. Each ClaimedTask's `startedAt` is that planned
   * start (max(due time, now)).
   */
  claimTasksAhead?(
    ids: string[],
    workerId: string,
    now: number,
    until: number,
    leaseMs: number,
    seqs?: readonly number[],
  ): Promise<ClaimedTask[]>;

  /**
   * Records finished attempts (compare-and-set on id, attempt and RUNNING) and their history. A
   * completion's `startedAt` is written where the row has no start (an attempt claimed ahead).
   */
  completeAttempts(completions: AttemptCompletion[], now: number): Promise<CompletionResult[]>;

  /**
   * Cancels a task: SCHEDULED/PENDING/RETRYING/BLOCKED/OVERFLOW → CANCELLED; RUNNING → cancel requested
   * (the worker is told to abort); terminal → conflict.
   */
  cancelTask(id: string, now: number): Promise<CancelResult>;

  /**
   * Reschedules, re-prioritises or changes the payload of a task that has not started its next
   * attempt (SCHEDULED, PENDING, RETRYING, BLOCKED, OVERFLOW), as a compare-and-set on those
   * states. A new time moves the task to SCHEDULED (later than now) or PENDING; a BLOCKED or
   * OVERFLOW task keeps its state (no due entry) and the time applies when it is let in.
   */
  updateWaitingTask(id: string, changes: UpdateWaitingChanges, now: number): Promise<UpdateWaitingResult>;

  /**
   * Dead-letter replay: DEAD → PENDING, due at `now`, with a fresh retry budget (the budget starts
   * after the attempts made so far; attempt numbers and history go on). Compare-and-set on DEAD.
   * @returns the task's due entry, or null when it is not DEAD (see `getTask` for why)
   */
  replayDead(id: string, now: number): Promise<DueEntry | null>;

  /** Deletes a DEAD task and its history. @returns false when it is not DEAD (or unknown). */
  deleteDead(id: string): Promise<boolean>;

  /**
   * Extends the lease of attempts still RUNNING (compare-and-set on id, attempt, state) to `until`
   * (epoch ms): the worker's heartbeat. @returns how many leases were extended
   */
  extendLeases(items: Array<{ taskId: string; attempt: number }>, until: number): Promise<number>;

  /**
   * {@link extendLeases}, also reporting which of the extended attempts have a cancel requested
   * (`cancelTask` on a RUNNING task, `cancelWorkflow`, a `cancel_running` cron firing): the node
   * that runs them learns of the cancel through the store at its next heartbeat, whether or not
   * the cancel's own message reached it. Same compare-and-set; the flag is read in the same write
   * (SQLite) or by one read after the writes (MongoDB): no round trip per attempt.
   */
  heartbeatAttempts(items: Array<{ taskId: string; attempt: number }>, until: number): Promise<AttemptHeartbeat>;

  /** RUNNING attempts whose lease ended before `now` (their worker stopped heartbeating). */
  findExpiredLeases(now: number, limit: number): Promise<OrphanedAttempt[]>;

  /**
   * Read-only audit: waiting tasks due before `overdueBefore` and RUNNING attempts whose lease
   * ended before `now` (at most `limit` of each, with totals).
   */
  auditScan(now: number, overdueBefore: number, limit: number): Promise<AuditScan>;

  /**
   * Tasks left RUNNING by a process that is gone (embedded mode: all of them at start-up), oldest
   * first, at most `limit`; with `external: false` not the attempts of external consumers (whose
   * lease the external sweep judges in any process).
   */
  findOrphanedAttempts(limit: number, options?: OrphanSearch): Promise<OrphanedAttempt[]>;

  /** Number of tasks in each state. */
  countByState(): Promise<Record<TaskState, number>>;

  /**
   * Retention (`resultRetentionMs`): deletes up to `limit` finished tasks (SUCCEEDED, FAILED, DEAD,
   * CANCELLED) whose `completed_at < before`, with their attempt history, and up to `limit`
   * idempotency keys already released (`expires_at <= now`). DEAD tasks are the dead-letter queue:
   * they are purged too, but only once older than the retention, like any finished task. Waiting
   * and RUNNING tasks are never touched. Call again while either count equals `limit`.
   * @returns how many tasks and idempotency keys were deleted
   */
  purgeFinished(before: number, now: number, limit: number): Promise<{ tasks: number; idempotencyKeys: number }>;

  // Workflows (docs/DESIGN.md §8). Workflow tasks are ordinary task rows with a `workflowId`; every task
  // operation above keeps their workflow consistent in the same atomic step:
  // - `completeAttempts`: a SUCCEEDED workflow task decrements the unmet count of each direct
  //   downstream task; one that reaches 0 leaves BLOCKED (PENDING, or SCHEDULED when its own
  //   `scheduledAt` is later) and is returned in `released`. A task ending FAILED, DEAD or
  //   CANCELLED cancels every non-terminal descendant (error type `upstream_failed`).
  // - `cancelTask`: a cancelled workflow task cancels its descendants the same way.
  // - `replayDead`: a replayed DEAD workflow task puts back to BLOCKED (with recomputed counts)
  //   the descendants it had cancelled (`upstream_failed`) whose other upstreams can still
  //   succeed, and its workflow back to RUNNING.
  // - any of them: when the workflow's last task becomes terminal, its status becomes final
  //   (see `finalWorkflowStatus`) with `completedAt`.
  // - `purgeFinished`: never deletes tasks of a RUNNING workflow; deletes finished workflows past
  //   the retention with their edges.

  /**
   * Stores a whole workflow atomically (all or none): its row (RUNNING), every task (roots
   * PENDING or SCHEDULED, the others BLOCKED with their unmet count) and every dependency edge.
   * @returns each task's stored sequence number, in input order and increasing (what
   *   {@link InsertResult.seq} is for a single task: the start order of ties)
   * @throws when an id (workflow or task) already exists; nothing is stored then
   */
  insertWorkflow(workflow: NewWorkflow): Promise<number[]>;

  getWorkflow(id: string): Promise<WorkflowRecord | null>;

  /** Every task of a workflow in submission order, with its dependencies' workflow-local ids. */
  getWorkflowTasks(id: string): Promise<WorkflowTaskSummary[]>;

  /** Workflows newest first, filtered by status and tenant; paginated like {@link listTasks}. */
  listWorkflows(query: WorkflowListQuery): Promise<WorkflowPage>;

  /**
   * Cancels a RUNNING workflow: marks it cancel-requested, cancels every task not yet started
   * (SCHEDULED, PENDING, RETRYING, BLOCKED; error type `workflow_cancelled`) and requests the
   * cancel of RUNNING ones (returned in `running` so their workers can be told to abort). The
   * workflow ends CANCELLED when its last task is terminal (at once if none was running).
   * Compare-and-set on status RUNNING: a finished workflow is a conflict.
   */
  cancelWorkflow(id: string, now: number): Promise<WorkflowCancelResult>;
}

/** The store was created with another partition count, or similar misconfiguration. */
export class StoreConfigError extends StartupError {}

/**
 * The store's server could not be reached at start-up (refused, unknown host, too many
 * connections, shutting down): one line and exit 69 (EX_UNAVAILABLE in BSD's sysexits.h: "a
 * service is unavailable"), not 78, since nothing in the configuration needs to change; a
 * supervisor may start the service again later. Once running, the same faults are 503s instead.
 */
export class StoreUnreachableError extends StartupError {
  override readonly exitCode: number = 69;
}

/** Filter and page of {@link Store.listWorkflows}. Newest first. */
export interface WorkflowListQuery {
  status?: WorkflowStatus;
  tenantId?: string;
  /** 1..1000 */
  limit: number;
  /** Opaque cursor from a previous page. */
  cursor?: string;
}

export interface WorkflowPage {
  workflows: WorkflowRecord[];
  nextCursor: string | null;
}

/** Result of {@link Store.cancelWorkflow}. */
export type WorkflowCancelResult =
  | { kind: 'cancelled'; workflow: WorkflowRecord; running: Array<{ taskId: string; attempt: number }> }
  | { kind: 'conflict'; workflow: WorkflowRecord }
  | { kind: 'not_found' };
