/**
 * Document mapping of the MongoDB adapter: the shape of every stored document and the conversions
 * to and from the domain records. Field names follow the SQLite columns (snake_case), so both
 * adapters read alike (cron definitions and firings: cron-documents.ts). JSON values (payload,
 * metadata, result, error, cron template) are stored as
 * JSON text, as in SQLite: BSON keys may not contain `.` or start with `$` (FerretDB refuses them
 * outright), and text keeps key order, NUL characters and number formatting exactly.
 *
 * `findOneAndUpdate` calls in ops/ take no `projection` option: FerretDB 1.x refuses it on
 * findAndModify (NotImplemented), so they return the whole document.
 */
import { checkpointOf, CheckpointColumns, progressOf } from '../checkpoint-columns';
import {
  AttemptRecord,
  ClaimedTask,
  DueEntry,
  NewTask,
  PRIORITIES,
  PRIORITY_RANK,
  Priority,
  RetrySettings,
  TaskRecord,
  TaskState,
} from '../../domain/task';

/** One archived attempt, embedded in its task document (`history`). */
export interface HistoryDoc {
  attempt: number;
  worker_id: string | null;
  started_at: number;
  ended_at: number;
  outcome: string;
  error: string | null;
}

/** A `tasks` document; `_id` is the task id. Checkpoint and progress fields: absent until an attempt writes them. */
export interface TaskDoc extends CheckpointColumns {
  _id: string;
  seq: number;
  partition: number;
  task_type: string;
  payload: string | null;
  priority: number;
  queue: string;
  tenant_id: string;
  correlation_id: string | null;
  idempotency_key: string | null;
  metadata: string;
  max_retries: number;
  retry_backoff: string;
  retry_delay_seconds: number;
  max_retry_delay_seconds: number | null;
  retry_jitter: boolean | null;
  retry_base: number;
  timeout_seconds: number;
  scheduled_at: number | null;
  due_at: number;
  state: string;
  attempts: number;
  worker_id: string | null;
  started_at: number | null;
  completed_at: number | null;
  duration_ms: number | null;
  result: string | null;
  error: string | null;
  cancel_requested: boolean;
  lease_expires_at: number | null;
  /**
   * Fencing epoch of the last partition owner that fenced, fired or claimed the task (cluster
   * mode; cluster-store.ts). Absent means 0: documents are inserted without it.
   */
  owner_epoch?: number;
  created_at: number;
  updated_at: number;
  cron_id: string | null;
  /** W3C traceparent given at submission (absent in documents written before it existed). */
  traceparent?: string | null;
  /** Concurrency key (absent in documents written before it existed; null: none). */
  concurrency_key?: string | null;
  /** Attempts that ended in a retry, and a DEAD attempt archived by a replay; oldest first. */
  history: HistoryDoc[];
  // Workflow tasks only (absent on a task submitted on its own); see WorkflowTaskFields.
  workflow_id?: string | null;
  workflow_task_id?: string;
  unmet_deps?: number;
  upstream_ids?: string[];
  downstream_ids?: string[];
  met_deps?: string[];
  wf_hold?: WorkflowHold;
  wf_done?: boolean;
  wf_replay?: boolean;
}

/** The state a task of a workflow being inserted takes when the insert completes (insert-workflow.ts). */
export type WorkflowHold = 'PENDING' | 'SCHEDULED' | 'BLOCKED';

/**
 * The fields a workflow task carries besides an ordinary task's. The DAG's edges are embedded
 * both ways (`upstream_ids`, `downstream_ids`: task ids, written with the task and never changed),
 * so no edge document can be missing or half-written.
 * - `unmet_deps`, `met_deps`: upstreams not yet SUCCEEDED (a count, for the view) and those that
 *   did (their ids): a release adds the upstream to `met_deps` and decrements the count in one
 *   update filtered on `met_deps` not containing it, so a repeated release never counts twice.
 * - `wf_hold`: present only while the workflow is being inserted (the task is BLOCKED and hidden
 *   until then): the state it takes when the insert completes.
 * - `wf_done`: false from the insert on; set true once the task's end has been applied to its
 *   workflow (release or cancel of downstream tasks, the workflow's count and status), as the
 *   last write of that follow-up — or together with CANCELLED when a cancel that covers it
 *   (its upstream's, its workflow's) ends it. A terminal task with `wf_done: false` is an end
 *   whose follow-up is under way or was cut short by a crash: the repair pass finishes it
 *   (repair-workflows.ts). A replay or a resume sets it false again.
 * - `wf_replay`: the same for a dead-letter replay (descendants back to BLOCKED, workflow reopened).
 */
export type WorkflowTaskFields = Required<
  Pick<TaskDoc, 'workflow_id' | 'workflow_task_id' | 'unmet_deps' | 'upstream_ids' | 'downstream_ids' | 'met_deps'>
>;

/** An `idempotency_keys` document (unique on tenant_id + key). */
export interface IdempotencyKeyDoc {
  tenant_id: string;
  key: string;
  task_id: string;
  request_hash: string;
  expires_at: number;
  /** `pending` while the batch that claimed it is being inserted; `committed` once it is stored. */
  status: 'pending' | 'committed';
  /** Id of the insertTasks call that claimed it (rollback and commit select by it). */
  batch: string;
  /** When the claiming call started (its tasks' createdAt): a stale pending claim may be taken over. */
  claimed_at: number;
}

/** JSON text of a value; `undefined` and null are stored as null. */
export function toJson(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

/** Value of JSON text; null stays null. */
export function fromJson(text: string | null | undefined): unknown {
  return text === null || text === undefined ? null : JSON.parse(text);
}

export function priorityOfRank(rank: number): Priority {
  return PRIORITIES[rank] ?? 'medium';
}

export function rankOfPriority(p: Priority): number {
  return PRIORITY_RANK[p];
}

/** The document a new task is stored as, with its reserved `seq`. */
export function taskToDoc(t: NewTask, seq: number): TaskDoc {
  return {
    _id: t.id,
    seq,
    partition: t.partition,
    task_type: t.taskType,
    payload: t.payload === undefined ? null : JSON.stringify(t.payload),
    priority: rankOfPriority(t.priority),
    queue: t.queue,
    tenant_id: t.tenantId,
    correlation_id: t.correlationId,
    idempotency_key: t.idempotencyKey,
    traceparent: t.traceparent ?? null,
    concurrency_key: t.concurrencyKey ?? null,
    metadata: JSON.stringify(t.metadata),
    max_retries: t.retry.maxRetries,
    retry_backoff: t.retry.backoff,
    retry_delay_seconds: t.retry.delaySeconds,
    max_retry_delay_seconds: t.retry.maxDelaySeconds ?? null,
    retry_jitter: t.retry.jitter ?? null,
    retry_base: t.retry.attemptBase ?? 0,
    timeout_seconds: t.timeoutSeconds,
    scheduled_at: t.scheduledAt,
    due_at: t.dueAt,
    state: t.state,
    attempts: 0,
    worker_id: null,
    started_at: null,
    completed_at: null,
    duration_ms: null,
    result: null,
    error: null,
    cancel_requested: false,
    lease_expires_at: null,
    created_at: t.createdAt,
    updated_at: t.createdAt,
    cron_id: null,
    history: [],
  };
}

/** Retry settings of a document; optional settings appear only when stored. */
export function retryFromDoc(
  d: Pick<TaskDoc, 'max_retries' | 'retry_backoff' | 'retry_delay_seconds' | 'max_retry_delay_seconds' | 'retry_jitter' | 'retry_base'>,
): RetrySettings {
  return {
    maxRetries: d.max_retries,
    backoff: d.retry_backoff as RetrySettings['backoff'],
    delaySeconds: d.retry_delay_seconds,
    ...(d.max_retry_delay_seconds !== null && d.max_retry_delay_seconds !== undefined
      ? { maxDelaySeconds: d.max_retry_delay_seconds }
      : {}),
    ...(d.retry_jitter !== null && d.retry_jitter !== undefined ? { jitter: d.retry_jitter } : {}),
    ...(d.retry_base > 0 ? { attemptBase: d.retry_base } : {}),
  };
}

/** Projection of the fields {@link retryFromDoc} reads. */
export const RETRY_FIELDS = {
  max_retries: 1,
  retry_backoff: 1,
  retry_delay_seconds: 1,
  max_retry_delay_seconds: 1,
  retry_jitter: 1,
  retry_base: 1,
} as const;

/** Full task record of a document. */
export function taskFromDoc(d: TaskDoc): TaskRecord {
  return {
    id: d._id,
    seq: d.seq,
    partition: d.partition,
    taskType: d.task_type,
    payload: fromJson(d.payload),
    priority: priorityOfRank(d.priority),
    queue: d.queue,
    tenantId: d.tenant_id,
    correlationId: d.correlation_id,
    idempotencyKey: d.idempotency_key,
    metadata: fromJson(d.metadata) as Record<string, unknown>,
    retry: retryFromDoc(d),
    timeoutSeconds: d.timeout_seconds,
    scheduledAt: d.scheduled_at,
    dueAt: d.due_at,
    state: d.state as TaskState,
    attempts: d.attempts,
    workerId: d.worker_id,
    startedAt: d.started_at,
    completedAt: d.completed_at,
    durationMs: d.duration_ms,
    result: fromJson(d.result),
    error: fromJson(d.error) as TaskRecord['error'],
    cancelRequested: d.cancel_requested === true,
    createdAt: d.created_at,
    updatedAt: d.updated_at,
    ...(d.cron_id ? { cronId: d.cron_id } : {}),
    ...(d.traceparent ? { traceparent: d.traceparent } : {}),
    ...(d.concurrency_key ? { concurrencyKey: d.concurrency_key } : {}),
    // Present only on workflow tasks, as in the SQLite store.
    ...(d.workflow_id ? { workflowId: d.workflow_id, workflowTaskId: d.workflow_task_id ?? null } : {}),
    ...checkpointOf(d),
    ...progressOf(d),
  };
}

/** Projection of the fields a {@link DueEntry} needs. */
export const DUE_FIELDS = {
  _id: 1,
  partition: 1,
  seq: 1,
  due_at: 1,
  priority: 1,
  tenant_id: 1,
  task_type: 1,
  state: 1,
  queue: 1,
  concurrency_key: 1,
} as const;

export function dueEntryFromDoc(
  d: Pick<TaskDoc, '_id' | 'partition' | 'seq' | 'due_at' | 'priority' | 'tenant_id' | 'task_type' | 'state'> & {
    queue?: string;
    concurrency_key?: string | null;
  },
): DueEntry {
  return {
    id: d._id,
    partition: d.partition,
    seq: d.seq,
    dueAt: d.due_at,
    priority: priorityOfRank(d.priority),
    tenantId: d.tenant_id,
    taskType: d.task_type,
    state: d.state as TaskState,
    ...(d.queue !== undefined ? { queue: d.queue } : {}),
    ...(d.concurrency_key ? { concurrencyKey: d.concurrency_key } : {}),
  };
}

/** What a worker needs, from the document a claim returned. */
export function claimedFromDoc(d: TaskDoc, now: number): ClaimedTask {
  return {
    id: d._id,
    attempt: d.attempts,
    taskType: d.task_type,
    payload: fromJson(d.payload),
    timeoutSeconds: d.timeout_seconds,
    idempotencyKey: d.idempotency_key,
    dueAt: d.due_at,
    retry: retryFromDoc(d),
    partition: d.partition,
    tenantId: d.tenant_id,
    startedAt: now,
    ...(d.traceparent ? { traceparent: d.traceparent } : {}),
    ...(d.checkpoint !== null && d.checkpoint !== undefined ? { lastCheckpoint: fromJson(d.checkpoint) } : {}),
  };
}

/** Archived attempt of a history entry. */
export function attemptFromHistory(taskId: string, h: HistoryDoc): AttemptRecord {
  return {
    taskId,
    attempt: h.attempt,
    workerId: h.worker_id,
    startedAt: h.started_at,
    endedAt: h.ended_at,
    outcome: h.outcome as TaskState,
    error: fromJson(h.error) as AttemptRecord['error'],
  };
}

/** True for a MongoDB duplicate-key error (E11000); FerretDB sends no `keyValue`, so callers know the key. */
export function isDuplicateKey(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 11000;
}
