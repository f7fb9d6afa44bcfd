import { RetrySettings, TaskState } from './task';

/**
 * Delay before retry number `retryNumber` (1 = first retry), in milliseconds.
 * - `fixed`: delay every time;
 * - `linear`: delay × n;
 * - `exponential`: delay × 2^(n−1) (Celery's and BullMQ's exponential backoff).
 * The result is capped at `maxDelayMs` (default 1 h). Jitter arrives with the reliability work.
 */
export function retryDelayMs(settings: RetrySettings, retryNumber: number, maxDelayMs = 3_600_000): number {
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
  return Math.min(Math.max(0, delay), maxDelayMs);
}

/** Outcome of an attempt as reported by a worker (or inferred for a lost worker). */
export type AttemptOutcome =
  | { kind: 'succeeded'; result: unknown }
  | { kind: 'failed'; message: string; errorType: string; permanent: boolean }
  | { kind: 'cancelled' };

/** The state a finished attempt moves its task to, and when a retry becomes due. */
export interface AttemptDecision {
  state: Extract<TaskState, 'SUCCEEDED' | 'FAILED' | 'RETRYING' | 'DEAD' | 'CANCELLED'>;
  /** Epoch ms at which a RETRYING task becomes PENDING again; null otherwise. */
  retryAt: number | null;
}

/**
 * Applies the retry policy (DESIGN §3, §6) to a finished attempt.
 * `attempt` is the number of the attempt that just ended (1-based); a task may run
 * `maxRetries + 1` times in all. Permanent errors never retry; everything else does while
 * attempts remain, then the task is DEAD.
 */
export function decideAttempt(
  outcome: AttemptOutcome,
  attempt: number,
  settings: RetrySettings,
  now: number,
): AttemptDecision {
  if (outcome.kind === 'succeeded') return { state: 'SUCCEEDED', retryAt: null };
  if (outcome.kind === 'cancelled') return { state: 'CANCELLED', retryAt: null };
  if (outcome.permanent) return { state: 'FAILED', retryAt: null };
  if (attempt > settings.maxRetries) return { state: 'DEAD', retryAt: null };
  return { state: 'RETRYING', retryAt: now + retryDelayMs(settings, attempt) };
}
