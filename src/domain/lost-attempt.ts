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

/** How a worker process ended, as its parent saw it (Node's ChildProcess `exit` event). */
export interface ProcessExit {
  /** Exit code; null when a signal ended it. */
  code: number | null;
  /** The signal that ended it (`SIGKILL`, …); null when it exited by itself. */
  signal: string | null;
}

/**
 * The message of an attempt lost with its worker process: `worker process exited with code 3`,
 * `worker process was killed by SIGKILL`, or `worker process was lost` when how it ended is
 * unknown (its exit was not seen).
 */
export function workerLostMessage(exit: ProcessExit | null | undefined): string {
  if (exit?.signal) return `worker process was killed by ${exit.signal}`;
  if (exit && exit.code !== null) return `worker process exited with code ${exit.code}`;
  return 'worker process was lost';
}
