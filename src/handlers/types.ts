/** The W3C trace context of an attempt (docs/OPERATIONS.md): its span in the submitter's trace. */
export interface TraceContext {
  /** 32 lowercase hex digits: the trace the submission's `traceparent` named. */
  traceId: string;
  /** 16 lowercase hex digits: this attempt's span. */
  spanId: string;
  /** `00-<traceId>-<spanId>-<flags>`: send it on (e.g. as an HTTP header) to continue the trace. */
  traceparent: string;
}

/** What a handler receives besides its payload (docs/DESIGN.md §6). */
export interface HandlerContext {
  taskId: string;
  /** 1-based number of this attempt. */
  attempt: number;
  idempotencyKey: string | null;
  /** Aborts on cancellation or timeout; `signal.reason` says which. */
  signal: AbortSignal;
  /** Tells the scheduler the handler is alive (extends the attempt's lease). */
  heartbeat(): void;
  /**
   * Writes an info line to the worker's log with `task_id`, `attempt` and (when traced) `trace_id`,
   * `span_id`, and keeps it with the attempt (the last 200 lines / 64 KiB; GET
   * /api/v1/tasks/{id}/attempts/{n}/logs). `fields` should be JSON (others are left out, marked).
   */
  log: (message: string, fields?: Record<string, unknown>) => void;
  /**
   * The attempt's trace context: a child span of the `traceparent` the task was submitted with;
   * null for a task submitted without one (unless an exporter is configured, which starts a trace).
   */
  traceContext: TraceContext | null;
  /**
   * Results of the task's direct upstream workflow tasks, keyed by their workflow-local ids (the
   * `id` each had in the workflow submission); empty outside workflows.
   */
  upstreamResults: Record<string, unknown>;
  /**
   * The value of the last checkpoint an earlier attempt of this task saved (`checkpoint`), or null
   * when there is none: where this attempt resumes.
   */
  lastCheckpoint: unknown;
  /**
   * Saves a small JSON value (at most 64 KiB as JSON text) with the task, for the next attempt to
   * resume from (`lastCheckpoint`); null clears it. Resolves once it is stored durably; rejects
   * with a `SchedulerError` whose `code` is `CHECKPOINT_TOO_LARGE` (over the cap),
   * `VALIDATION_FAILED` (not JSON) or `ATTEMPT_CONFLICT` (this attempt is no longer the task's
   * running attempt: it timed out, was cancelled, or its worker was taken for lost; stop working).
   * The specification's "save progress every N records; on retry, resume from the last checkpoint".
   */
  checkpoint(value: unknown): Promise<void>;
  /**
   * Reports progress, shown by GET /api/v1/tasks/{id}, the dashboard and the CLI: a fraction from
   * 0 to 1, or `{done?, total?, message?}` (domain/progress.ts). Not durable like a checkpoint:
   * the worker sends the latest value of each attempt at most once a second, so a report may be
   * replaced by a later one before it is stored, and the last second's may be lost with the
   * process. @throws ValidationError (`field` progress) for any other value
   */
  progress(value: number | { done?: number; total?: number; message?: string }): void;
}

/** A task handler: `async (payload, ctx) => result`. The result must be JSON-serialisable. */
export type TaskHandler = (payload: unknown, ctx: HandlerContext) => Promise<unknown> | unknown;

/**
 * Thrown by a handler when retrying cannot help (bad input, 4xx from a webhook): the task ends
 * FAILED with no retry. Any other error is retryable. Recognised by `name`, so a handler module
 * with its own copy of this class is understood too.
 */
export class PermanentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentError';
  }
}

/**
 * True when `err` says retrying is pointless (a PermanentError, or `permanent: true`). A value
 * whose reads throw (a getter, a Proxy's trap) is not permanent: never throws. Before, such a
 * throw escaped the worker's report of the attempt, which then waited for its timeout and a kill
 * of its process.
 */
export function isPermanent(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  try {
    const e = err as { name?: unknown; permanent?: unknown };
    return e.name === 'PermanentError' || e.permanent === true;
  } catch {
    return false;
  }
}
