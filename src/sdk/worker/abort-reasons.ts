/**
 * Why a pull worker aborted a handler's `ctx.signal` (its `signal.reason`). The names match the
 * scheduler's own worker processes where the cause is the same (`TaskTimeoutError`, `TaskCancelledError`).
 */

/** The attempt ran longer than the task's `timeout_ms`; it is reported failed (retried while attempts remain). */
export class TaskTimeoutError extends Error {
  /** @param ms the task's `timeout_ms` */
  constructor(readonly ms: number) {
    super(`timed out after ${ms} ms`);
    this.name = 'TaskTimeoutError';
  }
}

/**
 * The scheduler refused a report of this attempt (409 or 404): the task was cancelled or deleted, or
 * the attempt's lease ran out and the task runs again elsewhere. Nothing more is reported for it.
 */
export class TaskCancelledError extends Error {
  constructor(detail: string) {
    super(`cancelled: ${detail}`);
    this.name = 'TaskCancelledError';
  }
}

/** `close({timeoutMs})` gave up waiting for the handler; the attempt is reported failed (retried). */
export class WorkerClosedError extends Error {
  /** @param ms the close's `timeoutMs` */
  constructor(readonly ms: number) {
    super(`the worker closed ${ms} ms after close() with the handler still running`);
    this.name = 'WorkerClosedError';
  }
}
