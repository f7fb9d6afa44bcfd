import { AttemptOutcome, decideAttempt } from '../domain/retry-policy';
import type { RetrySettings } from '../domain/task';
import type { AttemptCompletion } from './store';

/**
 * The completion to write for an attempt that ended with `outcome`: the retry policy decides the
 * next state (`decideAttempt`), the result is kept only for a success, and the error is recorded
 * with its type and whether it was retryable (a cancel is not). Used for workers' reports, external
 * consumers' reports and lost attempts alike.
 * @param now epoch ms (the retry time is computed from it)
 * @param durationMs handler run time in ms, or null when unknown
 */
export function attemptCompletion(taskId: string, attempt: number, outcome: AttemptOutcome, retry: RetrySettings, now: number, durationMs: number | null): AttemptCompletion {
  const decision = decideAttempt(outcome, attempt, retry, now);
  return {
    taskId,
    attempt,
    state: decision.state,
    retryAt: decision.retryAt,
    result: outcome.kind === 'succeeded' ? outcome.result : null,
    error:
      outcome.kind === 'failed'
        ? { message: outcome.message, type: outcome.errorType, retryable: !outcome.permanent }
        : outcome.kind === 'cancelled'
          ? { message: 'cancelled while running', type: 'cancelled', retryable: false }
          : null,
    durationMs,
  };
}
