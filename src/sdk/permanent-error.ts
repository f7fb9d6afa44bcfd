/**
 * Thrown by a handler when retrying cannot help (bad input, a 4xx from a called service): the task
 * ends FAILED with no retry; any other error is retried while attempts remain. Recognised by its
 * `name` ('PermanentError') or by `permanent === true`, both by the scheduler's own worker processes
 * and by `createWorker` (`actor-task-scheduler/worker`), so a handler module may also define its own
 * copy of this class, or set `permanent: true` on any error.
 */
export class PermanentError extends Error {
  /** Always true: the mark the scheduler and the HTTP worker read. */
  readonly permanent = true;

  /**
   * @param message why retrying cannot help (shown as the task's `error.message`)
   * @param options `cause`: the underlying error (kept on the error, as for `Error`)
   */
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PermanentError';
  }
}
