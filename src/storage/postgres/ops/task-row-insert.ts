/**
 * The row of a new task in the PostgreSQL store, shared by the operations that insert tasks
 * (insertTasks, fireCrons): the `tasks` columns a {@link NewTask} fills, their values, and one
 * set-based `INSERT … SELECT FROM unnest(…)` for a whole list. Not an operation of its own: it runs
 * inside the caller's statement group (and transaction); idempotency keys are the caller's concern.
 */
import type { QueryResultRow } from 'pg';
import type { Db } from '../db';
import type { NewTask, TaskState } from '../../../domain/task';
import { rankOfPriority } from '../../sql/row-mapping';

/** `tasks` columns of a new task with the PostgreSQL array type each is passed as, in one order. */
const COLUMNS: ReadonlyArray<readonly [column: string, arrayType: string]> = [
  ['id', 'text[]'],
  ['partition', 'int[]'],
  ['task_type', 'text[]'],
  ['payload', 'text[]'],
  ['priority', 'int[]'],
  ['queue', 'text[]'],
  ['tenant_id', 'text[]'],
  ['correlation_id', 'text[]'],
  ['idempotency_key', 'text[]'],
  ['metadata', 'text[]'],
  ['max_retries', 'int[]'],
  ['retry_backoff', 'text[]'],
  ['retry_delay_seconds', 'float8[]'],
  ['max_retry_delay_seconds', 'float8[]'],
  ['retry_jitter', 'int[]'],
  ['retry_base', 'int[]'],
  ['timeout_seconds', 'float8[]'],
  ['scheduled_at', 'int8[]'],
  ['due_at', 'int8[]'],
  ['state', 'text[]'],
  ['created_at', 'int8[]'],
  ['updated_at', 'int8[]'],
  ['traceparent', 'text[]'],
  ['concurrency_key', 'text[]'],
  ['cron_id', 'text[]'],
];

/** Per task, what the stored row differs in from the {@link NewTask}: its cron and its first state. */
export interface TaskRowExtras {
  /** The cron the task is an instance of (null: none). */
  cronId?: string | null;
  /** The state stored instead of `task.state` (e.g. BLOCKED for a queued cron instance). */
  state?: TaskState;
}

/** The values of {@link COLUMNS} for one task, in their order (JSON as text, flags as 0/1). */
export function taskRowValues(t: NewTask, extras: TaskRowExtras = {}): unknown[] {
  return [
    t.id,
    t.partition,
    t.taskType,
    t.payload === undefined ? null : JSON.stringify(t.payload),
    rankOfPriority(t.priority),
    t.queue,
    t.tenantId,
    t.correlationId,
    t.idempotencyKey,
    JSON.stringify(t.metadata),
    t.retry.maxRetries,
    t.retry.backoff,
    t.retry.delaySeconds,
    t.retry.maxDelaySeconds ?? null,
    t.retry.jitter === undefined ? null : t.retry.jitter ? 1 : 0,
    t.retry.attemptBase ?? 0,
    t.timeoutSeconds,
    t.scheduledAt,
    t.dueAt,
    extras.state ?? t.state,
    t.createdAt,
    t.createdAt,
    t.traceparent ?? null,
    t.concurrencyKey ?? null,
    extras.cronId ?? null,
  ];
}

/** Settings of {@link insertTaskRows}. */
export interface InsertTaskRowsOptions {
  /** Per task (same index), its {@link TaskRowExtras}. */
  extras?: ReadonlyArray<TaskRowExtras>;
  /** True: a task whose id exists is left out (`ON CONFLICT (id) DO NOTHING`); false: the statement throws (23505). */
  skipExisting?: boolean;
  /** Columns to return for the inserted rows (default `id, seq`). */
  returning?: string;
}

/**
 * Inserts `tasks` in one statement, in their order (so `seq`, the identity column, increases
 * along the list). Output: the inserted rows' `returning` columns (rows left out by `skipExisting`
 * are absent; match rows by id, not by position).
 * @throws the database error of a duplicate id (unless `skipExisting`) or of a value out of range
 */
export async function insertTaskRows<R extends QueryResultRow = { id: string; seq: number }>(
  db: Db,
  tasks: readonly NewTask[],
  options: InsertTaskRowsOptions = {},
): Promise<R[]> {
  if (tasks.length === 0) return [];
  const columns: unknown[][] = COLUMNS.map(() => []);
  tasks.forEach((t, i) => taskRowValues(t, options.extras?.[i]).forEach((v, c) => columns[c].push(v)));
  const names = COLUMNS.map(([c]) => c).join(', ');
  const fromU = COLUMNS.map(([c]) => `u.${c}`).join(', ');
  const arrays = COLUMNS.map(([, type], i) => `$${i + 1}::${type}`).join(', ');
  // owner_epoch: the epoch of the partition's lease as the insert finds it (0 when none was ever
  // granted), so that a node whose lease was taken over and fenced cannot claim or mark a task
  // stored after the fence: its claims carry an older epoch, and the claim's compare-and-set
  // requires owner_epoch <= the claim's epoch. (An insert that commits while a fence runs may keep
  // the epoch before it; the fence and the lease's local deadline cover the rest, as on MongoDB.)
  const { rows } = await db.query<R>(
    `INSERT INTO tasks (${names}, owner_epoch)
     SELECT ${fromU}, COALESCE(l.epoch, 0)
     FROM unnest(${arrays}) WITH ORDINALITY AS u(${names}, ord)
     LEFT JOIN partition_leases l ON l.partition = u.partition
     ORDER BY u.ord
     ${options.skipExisting ? 'ON CONFLICT (id) DO NOTHING' : ''}
     RETURNING ${options.returning ?? 'id, seq'}`,
    columns,
  );
  return rows;
}
