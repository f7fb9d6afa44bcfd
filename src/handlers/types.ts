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
  log: (message: string, fields?: Record<string, unknown>) => void;
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
