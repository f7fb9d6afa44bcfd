/** The W3C trace context of an attempt (issue 9): its span in the submitter's trace. */
export interface TraceContext {
  /** 32 lowercase hex digits: the trace the submission's `traceparent` named. */
  traceId: string;
  /** 16 lowercase hex digits: this attempt's span. */
  spanId: string;
  /** `00-<traceId>-<spanId>-<flags>`: send it on (e.g. as an HTTP header) to continue the trace. */
  traceparent: string;
}

/** What a handler receives besides its payload (DESIGN §6). */
export interface HandlerContext {
  taskId: string;
  /** 1-based number of this attempt. */
  attempt: number;
  idempotencyKey: string | null;
  /** Aborts on cancellation or timeout; `signal.reason` says which. */
  signal: AbortSignal;
  /** Tells the scheduler the handler is alive (extends the attempt's lease). */
  heartbeat(): void;
  /** Writes an info line to the worker's log with `task_id`, `attempt` and (when traced) `trace_id`, `span_id`. */
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

/** True when `err` says retrying is pointless (a PermanentError, or `permanent: true`). */
export function isPermanent(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { name?: unknown; permanent?: unknown };
  return e.name === 'PermanentError' || e.permanent === true;
}
