import { TaskState, TERMINAL_STATES } from './task';
import { InvalidTransitionError } from './errors';

/**
 * The task lifecycle of docs/DESIGN.md §3 as an explicit transition table: event → (from states → to state).
 * Stores apply each transition as a compare-and-set on the `from` states, so a late or duplicated
 * message can never move a task backwards or complete it twice.
 */
export const TRANSITIONS = {
  /** A SCHEDULED task reached its time, or a RETRYING task its backoff (or was moved to now). */
  due: { from: ['SCHEDULED', 'RETRYING'], to: 'PENDING' },
  /** PATCH with a later `scheduled_at` of a task that has not started its next attempt. */
  reschedule: { from: ['SCHEDULED', 'PENDING', 'RETRYING'], to: 'SCHEDULED' },
  /** The dispatcher handed the task to a worker slot (a new attempt starts). */
  claim: { from: ['PENDING'], to: 'RUNNING' },
  /**
   * `due` and `claim` in one write: a due task claimed without a due mark (the partition owner
   * hands due tasks to the dispatcher at once and marks only those still waiting after
   * `dueMarkDelayMs`), the usual path of a due scheduled task or retry.
   */
  dueClaim: { from: ['SCHEDULED', 'RETRYING'], to: 'RUNNING' },
  succeed: { from: ['RUNNING'], to: 'SUCCEEDED' },
  /** Retryable error, timeout or lost worker with attempts left. */
  retry: { from: ['RUNNING'], to: 'RETRYING' },
  /** Retryable error with attempts exhausted: into the dead-letter queue. */
  exhaust: { from: ['RUNNING'], to: 'DEAD' },
  /** The handler threw a PermanentError. */
  failPermanently: { from: ['RUNNING'], to: 'FAILED' },
  /** Cancel before the task started (also while it waits in the overflow hold). */
  cancel: { from: ['SCHEDULED', 'PENDING', 'RETRYING', 'BLOCKED', 'OVERFLOW'], to: 'CANCELLED' },
  /** A RUNNING task whose cancellation the handler honoured. */
  cancelRunning: { from: ['RUNNING'], to: 'CANCELLED' },
  /** Every workflow dependency succeeded. */
  unblock: { from: ['BLOCKED'], to: 'PENDING' },
  /** Every workflow dependency succeeded, and the task's own `scheduled_at` is later. */
  unblockLater: { from: ['BLOCKED'], to: 'SCHEDULED' },
  /**
   * The overflow release let a held task in (the waiting depth fell under the low-water mark):
   * due at the release, its `scheduled_at` being absent or past. A task enters OVERFLOW only at
   * submission, instead of SCHEDULED or PENDING, when priority shedding holds it.
   */
  release: { from: ['OVERFLOW'], to: 'PENDING' },
  /** The overflow release let in a held task whose own `scheduled_at` is still ahead: it keeps it. */
  releaseLater: { from: ['OVERFLOW'], to: 'SCHEDULED' },
  /** A workflow upstream ended FAILED, DEAD or CANCELLED (error type `upstream_failed`). */
  upstreamFailed: { from: ['SCHEDULED', 'PENDING', 'RETRYING', 'BLOCKED'], to: 'CANCELLED' },
} as const satisfies Record<string, { from: readonly TaskState[]; to: TaskState }>;

export type TransitionEvent = keyof typeof TRANSITIONS;

/** True when `event` may fire in state `from`. */
export function canTransition(from: TaskState, event: TransitionEvent): boolean {
  return (TRANSITIONS[event].from as readonly TaskState[]).includes(from);
}

/**
 * Returns the target state of `event` from `from`.
 * @throws InvalidTransitionError (code INVALID_TRANSITION, 409) when the table has no such edge.
 */
export function transition(from: TaskState, event: TransitionEvent): TaskState {
  if (!canTransition(from, event)) throw new InvalidTransitionError(from, event);
  return TRANSITIONS[event].to;
}

/** True for SUCCEEDED, FAILED, DEAD and CANCELLED. */
export function isTerminal(state: TaskState): boolean {
  return TERMINAL_STATES.has(state);
}
