import { checkpointOf, CheckpointColumns, progressOf } from '../checkpoint-columns';
import { AttemptRecord, DueEntry, PRIORITIES, Priority, PRIORITY_RANK, RetrySettings, TaskRecord, TaskState } from '../../domain/task';

/** A `tasks` row as better-sqlite3 returns it (checkpoint and progress columns: migration 012). */
export interface TaskRow extends CheckpointColumns {
  seq: number;
  id: string;
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
  retry_jitter: number | null;
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
  cancel_requested: number;
  created_at: number;
  updated_at: number;
  cron_id?: string | null;
  workflow_id?: string | null;
  workflow_task_id?: string | null;
  unmet_deps?: number;
  traceparent?: string | null;
  concurrency_key?: string | null;
}

/** Priority name of a stored rank. */
export function priorityOfRank(rank: number): Priority {
  return PRIORITIES[rank] ?? 'medium';
}

/** Stored rank of a priority name. */
export function rankOfPriority(p: Priority): number {
  return PRIORITY_RANK[p];
}

/** Retry settings of a row; optional settings appear only when stored. */
export function retryFromRow(
  r: Pick<TaskRow, 'max_retries' | 'retry_backoff' | 'retry_delay_seconds' | 'max_retry_delay_seconds' | 'retry_jitter' | 'retry_base'>,
): RetrySettings {
  return {
    maxRetries: r.max_retries,
    backoff: r.retry_backoff as RetrySettings['backoff'],
    delaySeconds: r.retry_delay_seconds,
    ...(r.max_retry_delay_seconds !== null ? { maxDelaySeconds: r.max_retry_delay_seconds } : {}),
    ...(r.retry_jitter !== null ? { jitter: r.retry_jitter === 1 } : {}),
    ...(r.retry_base > 0 ? { attemptBase: r.retry_base } : {}),
  };
}

/** Columns read by {@link retryFromRow}. */
export const RETRY_COLUMNS = 'max_retries, retry_backoff, retry_delay_seconds, max_retry_delay_seconds, retry_jitter, retry_base';

/** JSON text → value; null stays null. */
export function parseJson(text: string | null): unknown {
  return text === null ? null : JSON.parse(text);
}

/** Full task record of a row. */
export function taskFromRow(r: TaskRow): TaskRecord {
  return {
    id: r.id,
    seq: r.seq,
    partition: r.partition,
    taskType: r.task_type,
    payload: parseJson(r.payload),
    priority: priorityOfRank(r.priority),
    queue: r.queue,
    tenantId: r.tenant_id,
    correlationId: r.correlation_id,
    idempotencyKey: r.idempotency_key,
    metadata: parseJson(r.metadata) as Record<string, unknown>,
    ...(r.traceparent ? { traceparent: r.traceparent } : {}),
    ...(r.concurrency_key ? { concurrencyKey: r.concurrency_key } : {}),
    retry: retryFromRow(r),
    timeoutSeconds: r.timeout_seconds,
    scheduledAt: r.scheduled_at,
    dueAt: r.due_at,
    state: r.state as TaskState,
    attempts: r.attempts,
    workerId: r.worker_id,
    startedAt: r.started_at,
    completedAt: r.completed_at,
    durationMs: r.duration_ms,
    result: parseJson(r.result),
    error: parseJson(r.error) as TaskRecord['error'],
    cancelRequested: r.cancel_requested === 1,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    ...(r.cron_id ? { cronId: r.cron_id } : {}),
    // Present only on workflow tasks, so a plain task's record is the same as before workflows.
    ...(r.workflow_id ? { workflowId: r.workflow_id, workflowTaskId: r.workflow_task_id ?? null } : {}),
    ...checkpointOf(r),
    ...progressOf(r),
  };
}

/** Columns needed for a {@link DueEntry}. */
export const DUE_COLUMNS = 'id, partition, seq, due_at, priority, tenant_id, task_type, state, queue, concurrency_key';

/** A column list such as {@link DUE_COLUMNS} with a table prefix: `id, seq` → `t.id, t.seq` (for a join). */
export function qualified(columns: string, table: string): string {
  return columns
    .split(',')
    .map((c) => `${table}.${c.trim()}`)
    .join(', ');
}

/** Due entry of a row selected with {@link DUE_COLUMNS}. */
export function dueEntryFromRow(
  r: Pick<TaskRow, 'id' | 'partition' | 'seq' | 'due_at' | 'priority' | 'tenant_id' | 'task_type' | 'state'> & {
    queue?: string;
    concurrency_key?: string | null;
  },
): DueEntry {
  return {
    id: r.id,
    partition: r.partition,
    seq: r.seq,
    dueAt: r.due_at,
    priority: priorityOfRank(r.priority),
    tenantId: r.tenant_id,
    taskType: r.task_type,
    state: r.state as TaskState,
    ...(r.queue !== undefined ? { queue: r.queue } : {}),
    ...(r.concurrency_key ? { concurrencyKey: r.concurrency_key } : {}),
  };
}

/** An `attempts` row. */
export interface AttemptRow {
  task_id: string;
  attempt: number;
  worker_id: string | null;
  started_at: number;
  ended_at: number;
  outcome: string;
  error: string | null;
}

export function attemptFromRow(r: AttemptRow): AttemptRecord {
  return {
    taskId: r.task_id,
    attempt: r.attempt,
    workerId: r.worker_id,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    outcome: r.outcome as TaskState,
    error: parseJson(r.error) as AttemptRecord['error'],
  };
}
