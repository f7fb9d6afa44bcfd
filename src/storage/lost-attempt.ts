import { decideAttempt } from '../domain/retry-policy';
import { AttemptCompletion, OrphanedAttempt } from './store';

/**
 * The completion that records an attempt whose worker is gone (`worker_lost`, retryable), decided
 * by the task's retry policy: RETRYING while its budget lasts, else DEAD. Used at start-up for
 * attempts a dead process left RUNNING, and by the lease sweeper.
 * @param message why the attempt is considered lost
 */
export function lostAttemptCompletion(o: OrphanedAttempt, now: number, message: string): AttemptCompletion {
  const d = decideAttempt({ kind: 'failed', message, errorType: 'worker_lost', permanent: false }, o.attempt, o.retry, now);
  return {
    taskId: o.taskId,
    attempt: o.attempt,
    state: d.state,
    retryAt: d.retryAt,
    result: null,
    error: { message, type: 'worker_lost', retryable: true },
    durationMs: null,
  };
}
