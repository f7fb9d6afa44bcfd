import { AttemptCompletion, attemptCompletion, OrphanedAttempt } from './attempt-completion';
import type { AttemptOutcome } from './retry-policy';

/**
 * The completion that records an attempt whose worker is gone (`worker_lost`, retryable), decided
 * by the task's retry policy: RETRYING while its budget lasts, else DEAD. Used at start-up for
 * attempts a dead process left RUNNING, and by the lease sweeper.
 * @param message why the attempt is considered lost
 */
export function lostAttemptCompletion(o: OrphanedAttempt, now: number, message: string): AttemptCompletion {
  if (o.neverStartedDueAt !== undefined) return neverStartedCompletion(o, o.neverStartedDueAt, now);
  return attemptCompletion(
    o.taskId,
    o.attempt,
    { kind: 'failed', message, errorType: 'worker_lost', permanent: false },
    o.retry,
    now,
    null,
  );
}

/**
 * The completion of an attempt claimed ahead of its due time that never started (its worker was
 * replaced, the service stopped or died before it was sent): a free retry (`worker_recycled`, not
 * counted against its retries), due at the task's due time `dueAt` (epoch ms), never earlier.
 */
export function neverStartedCompletion(
  o: Pick<OrphanedAttempt, 'taskId' | 'attempt' | 'retry'>,
  dueAt: number,
  now: number,
): AttemptCompletion {
  return retryNotBefore(attemptCompletion(o.taskId, o.attempt, neverStartedOutcome(), o.retry, now, 0), dueAt);
}

/**
 * Moves the retry of completion `c` to `at` (epoch ms) when it was due earlier: an attempt claimed
 * ahead that never started is retried at its task's due time, never before. Returns `c`.
 */
export function retryNotBefore(c: AttemptCompletion, at: number): AttemptCompletion {
  if (c.retryAt !== null && c.retryAt < at) c.retryAt = at;
  return c;
}

/**
 * The outcome of an attempt claimed ahead of its due time that was never sent to a worker: a free
 * retry (`worker_recycled`, not counted); its caller makes it due not before the task's due time.
 */
export function neverStartedOutcome(): AttemptOutcome {
  return {
    kind: 'failed',
    message:
      'claimed ahead of its due time and never sent to a worker (its worker was replaced or the service stopped); retried without counting',
    errorType: WORKER_RECYCLED,
    permanent: false,
    free: true,
  };
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

/** Error type of an attempt whose claim was answered too late for it to start (retried free). */
export const CLAIM_LATE = 'claim_late';

/**
 * The outcome of an attempt whose claim the store answered after the attempt's lease (or, in a
 * cluster, this member's lease on its partition) had ended (`lateClaims`: a store held up by a
 * lock or an outage, a stalled process): it was never sent to a worker, so it is retried at once
 * without counting against its retries. Before, it was left to the lease sweep, which charged it
 * as `worker_lost`: tasks with `max_retries` 0 went DEAD without having run.
 * @param waitedMs how long the claim took to be answered (ms)
 */
export function lateClaimOutcome(waitedMs: number): AttemptOutcome {
  return {
    kind: 'failed',
    message: `its claim was answered after ${waitedMs} ms, when its lease (or this member's lease on its partition) had ended, so it never reached a worker; retried without counting against its retries`,
    errorType: CLAIM_LATE,
    permanent: false,
    free: true,
  };
}

/** Error type of an attempt the service's own graceful stop cut short (retried free). */
export const SERVICE_STOPPED = 'service_stopped';

/**
 * The outcome of an attempt still running when a graceful stop's grace (`shutdownGraceMs`) ran out:
 * the service chose to stop, the task did nothing wrong, so it is retried without counting against
 * its retries (`free`), as Sidekiq pushes unfinished jobs back at shutdown. Its worker process is
 * stopped with the service; a report it sends later is refused (the attempt is no longer running).
 */
export function stoppedOutcome(): AttemptOutcome {
  return {
    kind: 'failed',
    message: 'still running when the service stopped (graceful stop, after shutdownGraceMs); retried without counting against its retries',
    errorType: SERVICE_STOPPED,
    permanent: false,
    free: true,
  };
}
