/** Task model shared by every layer (docs/DESIGN.md §3, §10). Times are epoch milliseconds. */
import type { ErrorDetail } from './attempt-error';
import type { CheckpointRecord } from './checkpoint';
import type { ProgressRecord } from './progress';

export const TASK_STATES = [
  'SCHEDULED',
  'PENDING',
  'RUNNING',
  'SUCCEEDED',
  'FAILED',
  'RETRYING',
  'DEAD',
  'CANCELLED',
  'BLOCKED',
  'OVERFLOW',
] as const;
export type TaskState = (typeof TASK_STATES)[number];

export const TERMINAL_STATES: ReadonlySet<TaskState> = new Set(['SUCCEEDED', 'FAILED', 'DEAD', 'CANCELLED']);

/** States in which a task waits in a partition owner's window for its due time. */
export const WAITING_STATES: readonly TaskState[] = ['SCHEDULED', 'PENDING', 'RETRYING'];

export const PRIORITIES = ['high', 'medium', 'low'] as const;
export type Priority = (typeof PRIORITIES)[number];

/** Lower rank runs first. */
export const PRIORITY_RANK: Record<Priority, number> = { high: 0, medium: 1, low: 2 };

export const RETRY_BACKOFFS = ['exponential', 'fixed', 'linear'] as const;
export type RetryBackoff = (typeof RETRY_BACKOFFS)[number];

/** Retry settings of one task (seconds, as in the API). */
export interface RetrySettings {
  /** Retries after the first attempt of the current budget. */
  maxRetries: number;
  backoff: RetryBackoff;
  /** Base delay in seconds. */
  delaySeconds: number;
  /** Cap on any one delay, in seconds (default 3600). */
  maxDelaySeconds?: number;
  /** Full jitter (default: on for exponential, off otherwise). */
  jitter?: boolean;
  /** Attempts made before the current budget started (a dead-letter replay); default 0. */
  attemptBase?: number;
}

/** A validated submission with every default applied, ready to be stored. */
export interface NewTask {
  id: string;
  partition: number;
  taskType: string;
  payload: unknown;
  priority: Priority;
  queue: string;
  tenantId: string;
  correlationId: string | null;
  idempotencyKey: string | null;
  /**
   * With an idempotency key: SHA-256 of the canonical submission and until when (epoch ms) the key
   * is held. A repeat inside that window with the same hash returns the original task.
   */
  idempotency?: { requestHash: string; expiresAt: number };
  metadata: Record<string, unknown>;
  /** W3C `traceparent` given at submission (null or absent: none); each attempt's span is its child. */
  traceparent?: string | null;
  /** Tasks with the same key share its concurrency limit (null or absent: none). */
  concurrencyKey?: string | null;
  retry: RetrySettings;
  timeoutSeconds: number;
  /** Requested start time; null means "now". */
  scheduledAt: number | null;
  /** When the task becomes ready (scheduledAt or the submission time). */
  dueAt: number;
  /** OVERFLOW: accepted into the overflow hold instead of refused (see `domain/overflow-policy.ts`). */
  state: 'SCHEDULED' | 'PENDING' | 'OVERFLOW';
  createdAt: number;
}

/** A stored task as read back from the store. */
export interface TaskRecord extends Omit<NewTask, 'state'> {
  state: TaskState;
  seq: number;
  /** Attempts started so far. */
  attempts: number;
  workerId: string | null;
  startedAt: number | null;
  completedAt: number | null;
  durationMs: number | null;
  result: unknown;
  error: TaskError | null;
  cancelRequested: boolean;
  updatedAt: number;
  /** The cron definition whose firing created this task (absent or null for other tasks). */
  cronId?: string | null;
  /** The workflow the task belongs to (absent for a task submitted on its own). */
  workflowId?: string | null;
  /** Its workflow-local id (`tasks[i].id` of the workflow submission). */
  workflowTaskId?: string | null;
  /** The last checkpoint an attempt saved (absent: none; domain/checkpoint.ts). */
  checkpoint?: CheckpointRecord;
  /** The last progress an attempt reported (absent: none; domain/progress.ts). */
  progress?: ProgressRecord;
}

/**
 * Error recorded for a failed attempt. Besides message, type and retryability it may keep the
 * error's code, cause chain, bounded stack, HTTP status or a lost process's exit (domain/attempt-error.ts).
 */
export interface TaskError extends ErrorDetail {
  message: string;
  /** Error class name or a stable reason such as `timeout`, `worker_lost`, `cancelled`. */
  type: string;
  retryable: boolean;
}

/** One finished attempt, kept as run history. */
export interface AttemptRecord {
  taskId: string;
  attempt: number;
  workerId: string | null;
  startedAt: number;
  endedAt: number;
  outcome: TaskState;
  error: TaskError | null;
}

/** The small entry a partition owner and the dispatcher keep per waiting task. */
export interface DueEntry {
  id: string;
  partition: number;
  seq: number;
  dueAt: number;
  priority: Priority;
  tenantId: string;
  taskType: string;
  state: TaskState;
  /**
   * The task's queue (absent: not known to the producer of the entry, treated as a queue served by
   * the forked workers). Tasks of an external queue (config `externalQueues`) go to a Redis stream.
   */
  queue?: string;
  /** The task's concurrency key (absent: none); a full key sets the entry aside in the dispatcher. */
  concurrencyKey?: string;
}

/** What a worker needs to run one attempt (returned by a claim). */
export interface ClaimedTask {
  id: string;
  /** SQLite: the row's rowid (`seq`), the lookup hint its completion carries back; the MongoDB store leaves it out. */
  seq?: number;
  /**
   * PostgreSQL: the workflow the task belongs to, null when none (fixed at creation); its
   * completion carries it back (`AttemptCompletion.workflowId`). The other stores leave it out.
   */
  workflowId?: string | null;
  attempt: number;
  taskType: string;
  payload: unknown;
  timeoutSeconds: number;
  idempotencyKey: string | null;
  dueAt: number;
  retry: RetrySettings;
  partition: number;
  tenantId: string;
  startedAt: number;
  /** Results of its upstream workflow tasks keyed by their workflow-local ids (workflow tasks only). */
  upstreamResults?: Record<string, unknown>;
  /** W3C `traceparent` given at submission, or null. */
  traceparent?: string | null;
  /** The value of the last checkpoint an earlier attempt saved (absent: none): where this attempt resumes. */
  lastCheckpoint?: unknown;
}
