import type { ErrorDetail } from './attempt-error';
import { RetrySettings, TaskState } from './task';

/** Default cap on one retry delay: one hour. */
export const DEFAULT_MAX_RETRY_DELAY_SECONDS = 3600;

/** Whether a task's retries use jitter: explicit setting, else on for exponential backoff. */
export function jitterOf(settings: RetrySettings): boolean {
  return settings.jitter ?? settings.backoff === 'exponential';
}

/**
 * Delay before retry number `retryNumber` (1 = first retry), in milliseconds.
 * - `fixed`: delay every time;
 * - `linear`: delay × n;
 * - `exponential`: delay × 2^(n−1) (Celery's and BullMQ's exponential backoff).
 * The result is capped at `maxDelaySeconds` (default 1 h). With jitter it is "full jitter": a
 * uniform draw between 0 and the capped delay (AWS Architecture Blog, "Exponential Backoff And
 * Jitter", 2015), so clients that failed together do not retry together.
 * @param random uniform in [0, 1) (injectable for tests)
 */
export function retryDelayMs(settings: RetrySettings, retryNumber: number, random: () => number = Math.random): number {
  const maxDelayMs = (settings.maxDelaySeconds ?? DEFAULT_MAX_RETRY_DELAY_SECONDS) * 1000;
  const base = settings.delaySeconds * 1000;
  const n = Math.max(1, retryNumber);
  let delay: number;
  switch (settings.backoff) {
    case 'fixed':
      delay = base;
      break;
    case 'linear':
      delay = base * n;
      break;
    case 'exponential':
      delay = base * 2 ** Math.min(n - 1, 40);
      break;
  }
  const capped = Math.min(Math.max(0, delay), maxDelayMs);
  // Whole milliseconds either way: a delay of fractional seconds (0.0015) must not make a due time
  // of fractional ms (the PostgreSQL store keeps times as bigint).
  return jitterOf(settings) ? Math.floor(random() * capped) : Math.round(capped);
}

/** Outcome of an attempt as reported by a worker (or inferred for a lost worker). */
export type AttemptOutcome =
  | { kind: 'succeeded'; result: unknown }
  | {
      kind: 'failed';
      message: string;
      errorType: string;
      permanent: boolean;
      /** What else is known of the error: code, cause chain, stack, HTTP status, a lost process's exit. */
      detail?: ErrorDetail;
      /**
       * The attempt did nothing wrong: the service killed its process to stop another attempt
       * there (`worker_recycled`). It is retried at once and does not count against its budget.
       */
      free?: true;
    }
  | { kind: 'cancelled' };

/** The state a finished attempt moves its task to, and when a retry becomes due. */
export interface AttemptDecision {
  state: Extract<TaskState, 'SUCCEEDED' | 'FAILED' | 'RETRYING' | 'DEAD' | 'CANCELLED'>;
  /** Epoch ms at which a RETRYING task becomes PENDING again; null otherwise. */
  retryAt: number | null;
}

/**
 * Applies the retry policy (docs/DESIGN.md §3, §6) to a finished attempt.
 * `attempt` is the number of the attempt that just ended (1-based, counting every attempt the
 * task ever made); the current budget allows `maxRetries + 1` attempts after `attemptBase`.
 * Permanent errors never retry; a free failure (`free`) retries at once without using the budget;
 * everything else retries while the budget lasts, then the task is DEAD.
 * @param random uniform in [0, 1) for jitter (injectable for tests)
 */
export function decideAttempt(
  outcome: AttemptOutcome,
  attempt: number,
  settings: RetrySettings,
  now: number,
  random: () => number = Math.random,
): AttemptDecision {
  if (outcome.kind === 'succeeded') return { state: 'SUCCEEDED', retryAt: null };
  if (outcome.kind === 'cancelled') return { state: 'CANCELLED', retryAt: null };
  if (outcome.permanent) return { state: 'FAILED', retryAt: null };
  // Not charged: due again at once, whatever is left of the budget (the store moves the budget on).
  if (outcome.free) return { state: 'RETRYING', retryAt: now };
  const inBudget = attempt - (settings.attemptBase ?? 0);
  if (inBudget > settings.maxRetries) return { state: 'DEAD', retryAt: null };
  return { state: 'RETRYING', retryAt: now + retryDelayMs(settings, inBudget, random) };
}
