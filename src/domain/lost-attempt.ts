import { AttemptCompletion, attemptCompletion, OrphanedAttempt } from './attempt-completion';
import type { AttemptOutcome } from './retry-policy';

/**
 * The completion that records an attempt whose worker is gone (`worker_lost`, retryable), decided
 * by the task's retry policy: RETRYING while its budget lasts, else DEAD. Used at start-up for
 * attempts a dead process left RUNNING, and by the lease sweeper.
 * @param message why the attempt is considered lost
 */
export function lostAttemptCompletion(o: OrphanedAttempt, now: number, message: string): AttemptCompletion {
  return attemptCompletion(
    o.taskId,
    o.attempt,
    { kind: 'failed', message, errorType: 'worker_lost', permanent: false },
    o.retry,
    now,
    null,
  );
}

/** Error type of an attempt killed with its process to stop another attempt there (retried free). */
export const WORKER_RECYCLED = 'worker_recycled';

/**
 * The outcome of an attempt that did nothing wrong but ran in a worker process the service killed
 * to stop another attempt (one past its timeout or cancel grace): `worker_recycled`, retryable and
 * free (`free`: retried at once, not counted against its retries).
 * @param reason why the process was killed (names the attempts that caused it)
 */
export function recycledOutcome(reason: string): AttemptOutcome {
  return {
    kind: 'failed',
    message: `its worker process was killed to stop another attempt (${reason}); retried without counting against its retries`,
    errorType: WORKER_RECYCLED,
    permanent: false,
    free: true,
  };
}
