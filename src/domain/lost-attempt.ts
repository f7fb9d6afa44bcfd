import { AttemptCompletion, attemptCompletion, OrphanedAttempt } from './attempt-completion';

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
