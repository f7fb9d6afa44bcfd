import { AttemptOutcome, decideAttempt } from './retry-policy';
import type { RetrySettings, TaskError, TaskRecord } from './task';

/** One attempt outcome to record, decided by the retry policy before it reaches the store. */
export interface AttemptCompletion {
  taskId: string;
  attempt: number;
  /**
   * The task's `seq` as its claim returned it: a lookup hint, as `seqs` of `claimTasks` (the id
   * and attempt must still match; a hint that finds nothing falls back to the id). SQLite uses it
   * for final states; a RETRYING target is found by id.
   */
  seq?: number;
  /**
   * The task's workflow as its claim returned it (`ClaimedTask.workflowId`): null when it is in
   * none (membership is fixed at creation), absent when unknown. The PostgreSQL store writes a
   * batch whose tasks are all in none without locking workflows (a task found in one after all is
   * completed the full way); the other stores ignore it.
   */
  workflowId?: string | null;
  /**
   * Target state. RETRYING becomes CANCELLED if a cancel was requested meanwhile, and PENDING at
   * once when `retryAt <= now` (the backoff is already over).
   */
  state: 'SUCCEEDED' | 'FAILED' | 'RETRYING' | 'DEAD' | 'CANCELLED';
  /** When a RETRYING task is due again (epoch ms); ignored for other states. */
  retryAt: number | null;
  result: unknown;
  error: TaskError | null;
  durationMs: number | null;
  /**
   * A free retry (an attempt killed with its process to stop another one): the store also moves
   * the task's budget on by one (`attemptBase` + 1), so this attempt is not counted. Only with RETRYING.
   */
  freeRetry?: true;
  /**
   * An attempt claimed ahead of its due time (`Store.claimTasksAhead`, whose row has no start
   * yet): the instant its dispatcher sent it to a worker (epoch ms), written as the row's
   * `started_at` where it has none. Absent for every other attempt (their claim wrote the start).
   */
  startedAt?: number;
  /**
   * Applied only while the attempt's lease still ends before this instant (epoch ms): set by a
   * lease sweep on the attempts it found expired, so that a heartbeat committed between the
   * sweep's read and this write wins (the completion is then not applied, and the consumer keeps
   * the lease the heartbeat answered). Absent for every other completion.
   */
  leaseExpiredBefore?: number;
}

/** A task that was RUNNING when its process died. */
export interface OrphanedAttempt {
  taskId: string;
  attempt: number;
  retry: TaskRecord['retry'];
  workerId: string | null;
  /**
   * Set when the attempt never started: it was claimed ahead of its due time (`claimTasksAhead`,
   * its row has no start) and never sent to a worker. Its task's due time (epoch ms): it is
   * retried free (not counted), not before then.
   */
  neverStartedDueAt?: number;
}

/**
 * The completion to write for an attempt that ended with `outcome`: the retry policy decides the
 * next state (`decideAttempt`), the result is kept only for a success, and the error is recorded
 * with its type and whether it was retryable (a cancel is not). Used for workers' reports, external
 * consumers' reports and lost attempts alike.
 * @param now epoch ms (the retry time is computed from it)
 * @param durationMs handler run time in ms, or null when unknown
 */
export function attemptCompletion(
  taskId: string,
  attempt: number,
  outcome: AttemptOutcome,
  retry: RetrySettings,
  now: number,
  durationMs: number | null,
): AttemptCompletion {
  const decision = decideAttempt(outcome, attempt, retry, now);
  const free = outcome.kind === 'failed' && outcome.free === true && decision.state === 'RETRYING';
  return {
    ...(free ? { freeRetry: true as const } : {}),
    taskId,
    attempt,
    state: decision.state,
    retryAt: decision.retryAt,
    result: outcome.kind === 'succeeded' ? outcome.result : null,
    error:
      outcome.kind === 'failed'
        ? { message: outcome.message, type: outcome.errorType, retryable: !outcome.permanent, ...outcome.detail }
        : outcome.kind === 'cancelled'
          ? { message: 'cancelled while running', type: 'cancelled', retryable: false }
          : null,
    durationMs,
  };
}
