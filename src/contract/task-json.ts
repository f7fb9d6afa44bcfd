import { DEFAULT_MAX_RETRY_DELAY_SECONDS, jitterOf } from '../domain/retry-policy';
import { AttemptRecord, Priority, RetryBackoff, TaskError, TaskRecord, TaskState } from '../domain/task';
import { taskErrorJson } from './error-json';

/** ISO-8601 UTC of epoch ms; null stays null. */
export function iso(ms: number): string;
export function iso(ms: number | null): string | null;
export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** One finished attempt of a task (`?include=attempts`). */
export interface AttemptView {
  attempt: number;
  worker_id: string | null;
  started_at: string;
  ended_at: string;
  outcome: TaskState;
  error: TaskError | null;
}

/** The last checkpoint an attempt saved; a list entry (summary) leaves out its `value`. */
export interface CheckpointView {
  attempt: number;
  saved_at: string;
  size_bytes: number;
  value?: unknown;
}

/**
 * A task as `GET /api/v1/tasks/{id}` answers it (response schema `taskSchema`, api/openapi/responses.ts;
 * test/unit/contract-types.test.ts checks the two agree). List entries leave out `payload` and
 * `result`, and the checkpoint's `value`. Times are ISO-8601 UTC.
 */
export interface TaskView {
  task_id: string;
  task_type: string;
  status: TaskState;
  priority: Priority;
  queue: string;
  payload?: unknown;
  metadata: Record<string, unknown>;
  idempotency_key: string | null;
  concurrency_key: string | null;
  scheduled_at: string | null;
  due_at: string;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  completed_at: string | null;
  duration_ms: number | null;
  attempts: number;
  /**
   * Attempts not charged to the current retry budget: those made before the last dead-letter replay
   * (which starts a fresh budget) and free retries. The budget's own attempt is `attempts - retry_base`.
   */
  retry_base: number;
  max_retries: number;
  retry_backoff: RetryBackoff;
  retry_delay_seconds: number;
  max_retry_delay_seconds: number;
  retry_jitter: boolean;
  timeout_seconds: number;
  worker_id: string | null;
  result?: unknown;
  error: TaskError | null;
  cancel_requested: boolean;
  /** A fraction 0..1 or `{done?, total?, message?}`; null before any report. */
  progress: unknown;
  progress_attempt: number | null;
  progress_at: string | null;
  checkpoint: CheckpointView | null;
  /** Instances of a cron only. */
  cron_id?: string;
  /** Tasks submitted with a W3C trace context only. */
  traceparent?: string;
  /** Workflow tasks only. */
  workflow_id?: string;
  workflow_task_id?: string | null;
  /** With `?include=attempts` only. */
  attempt_history?: AttemptView[];
}

/** A page of tasks (summaries): `GET /api/v1/tasks`, `GET /api/v1/dead-letter`. */
export interface TaskPageView {
  tasks: TaskView[];
  next_cursor: string | null;
}

/** Acknowledgement of a submission (docs/DESIGN.md §10). */
export interface SubmitAck {
  task_id: string;
  status: string;
  scheduled_at: string | null;
  created_at: string;
  /** Present (true) when an earlier task with the same idempotency key and request answers. */
  idempotent_replayed?: true;
}

/**
 * The acknowledgement of a stored task.
 * @param isoOf epoch ms → ISO-8601 (default {@link iso}); a batch passes {@link lastIsoMemo}'s,
 *   since its tasks share their creation time and often their scheduled time
 */
export function ackJson(
  t: Pick<TaskRecord, 'id' | 'state' | 'scheduledAt' | 'createdAt'>,
  isoOf: (ms: number | null) => string | null = iso,
): SubmitAck {
  return { task_id: t.id, status: t.state, scheduled_at: isoOf(t.scheduledAt), created_at: isoOf(t.createdAt) as string };
}

/**
 * {@link iso} that remembers its last two answers (a batch's creation time and scheduled time):
 * `toISOString` costs about 0.5 µs, twice per acknowledged task otherwise.
 * @returns the memoising function; it throws RangeError, as {@link iso} does, for an instant
 *   outside the dates JavaScript can represent
 */
export function lastIsoMemo(): (ms: number | null) => string | null {
  const known: Array<[number, string]> = [];
  return (ms) => {
    if (ms === null) return null;
    for (const [k, v] of known) if (k === ms) return v;
    const text = iso(ms);
    known.unshift([ms, text]);
    known.length = Math.min(known.length, 2);
    return text;
  };
}

/**
 * A task's `metadata` as the API shows it: the submission's, with its `tenant_id` and its
 * `correlation_id` (null when none). Also what `maxMetadataBytes` counts at submission (build-task.ts).
 */
export function metadataJson(t: Pick<TaskRecord, 'metadata' | 'tenantId' | 'correlationId'>): Record<string, unknown> {
  return { ...t.metadata, tenant_id: t.tenantId, correlation_id: t.correlationId };
}

/**
 * The API's view of a task (snake_case, ISO-8601 UTC times). With `summary`, `payload` and
 * `result` are left out (list pages).
 */
export function taskJson(t: TaskRecord, attempts?: AttemptRecord[], options: { summary?: boolean } = {}): TaskView {
  const json: TaskView = {
    task_id: t.id,
    task_type: t.taskType,
    status: t.state,
    priority: t.priority,
    queue: t.queue,
    payload: t.payload,
    metadata: metadataJson(t),
    idempotency_key: t.idempotencyKey,
    concurrency_key: t.concurrencyKey ?? null,
    scheduled_at: iso(t.scheduledAt),
    due_at: iso(t.dueAt),
    created_at: iso(t.createdAt),
    updated_at: iso(t.updatedAt),
    started_at: iso(t.startedAt),
    completed_at: iso(t.completedAt),
    duration_ms: t.durationMs,
    attempts: t.attempts,
    retry_base: t.retry.attemptBase ?? 0,
    max_retries: t.retry.maxRetries,
    retry_backoff: t.retry.backoff,
    retry_delay_seconds: t.retry.delaySeconds,
    max_retry_delay_seconds: t.retry.maxDelaySeconds ?? DEFAULT_MAX_RETRY_DELAY_SECONDS,
    retry_jitter: jitterOf(t.retry),
    timeout_seconds: t.timeoutSeconds,
    worker_id: t.workerId,
    result: t.result,
    error: taskErrorJson(t.error),
    cancel_requested: t.cancelRequested,
    // Long tasks: the last progress an attempt reported and the last checkpoint it saved.
    ...progressJson(t),
    checkpoint: t.checkpoint
      ? { attempt: t.checkpoint.attempt, saved_at: iso(t.checkpoint.savedAt), size_bytes: t.checkpoint.bytes, value: t.checkpoint.value }
      : null,
    ...(t.cronId ? { cron_id: t.cronId } : {}),
    // The W3C trace context it was submitted with (header `traceparent`), when there was one.
    ...(t.traceparent ? { traceparent: t.traceparent } : {}),
    // Workflow tasks only: the workflow and the task's workflow-local id.
    ...(t.workflowId ? { workflow_id: t.workflowId, workflow_task_id: t.workflowTaskId ?? null } : {}),
    ...(attempts
      ? {
          attempt_history: attempts.map((a) => ({
            attempt: a.attempt,
            worker_id: a.workerId,
            started_at: iso(a.startedAt),
            ended_at: iso(a.endedAt),
            outcome: a.outcome,
            error: taskErrorJson(a.error),
          })),
        }
      : {}),
  };
  if (options.summary) {
    const { payload: _payload, result: _result, checkpoint, ...summary } = json;
    // A summary says whether there is a checkpoint, not what it holds (up to 64 KiB each).
    return {
      ...summary,
      // A summary leaves out the error's stack (up to 4 KiB each); GET the task for it.
      error: taskErrorJson(t.error, { stack: false }),
      checkpoint: checkpoint ? { attempt: checkpoint.attempt, saved_at: checkpoint.saved_at, size_bytes: checkpoint.size_bytes } : null,
    };
  }
  return json;
}

/**
 * `progress` (the value: a fraction 0..1 or `{done?, total?, message?}`), `progress_attempt` and
 * `progress_at` (ISO-8601 UTC), all null before any report.
 */
function progressJson(t: TaskRecord): Pick<TaskView, 'progress' | 'progress_attempt' | 'progress_at'> {
  const p = t.progress;
  return p
    ? { progress: p.value, progress_attempt: p.attempt, progress_at: iso(p.reportedAt) }
    : { progress: null, progress_attempt: null, progress_at: null };
}
