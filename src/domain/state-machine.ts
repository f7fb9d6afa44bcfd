import { TaskState, TERMINAL_STATES } from './task';
import { InvalidTransitionError } from './errors';

/**
 * The task lifecycle (docs/DESIGN.md) as an explicit transition table: event → (from states → to
 * state). Both store adapters build every compare-and-set on a task's state from this table: SQLite
 * as `state IN (…)` (src/storage/sql/state-sql.ts, shared by SQLite and PostgreSQL), MongoDB as `{state: {$in: …}}`
 * (src/storage/mongo/state-filter.ts), so a late or duplicated message can never move a task
 * backwards or complete it twice. The storage conformance suite checks every (state, event) pair
 * of it against both adapters (test/storage/conformance/lifecycle.ts).
 */
export const TRANSITIONS = {
  /** A SCHEDULED task reached its time, or a RETRYING task its backoff. */
  due: { from: ['SCHEDULED', 'RETRYING'], to: 'PENDING' },
  /** PATCH with a later `scheduled_at` of a task that has not started its next attempt. */
  reschedule: { from: ['SCHEDULED', 'PENDING', 'RETRYING'], to: 'SCHEDULED' },
  /** PATCH with a `scheduled_at` now or past (or none) of a task that has not started its next attempt. */
  rescheduleNow: { from: ['SCHEDULED', 'PENDING', 'RETRYING'], to: 'PENDING' },
  /** The dispatcher handed the task to a worker slot (a new attempt starts). */
  claim: { from: ['PENDING'], to: 'RUNNING' },
  /**
   * `due` and `claim` in one write: a due task claimed without a due mark (the partition owner
   * hands due tasks to the dispatcher at once and marks only those still waiting after
   * `dueMarkDelayMs`), the usual path of a due scheduled task or retry.
   */
  dueClaim: { from: ['SCHEDULED', 'RETRYING'], to: 'RUNNING' },
  succeed: { from: ['RUNNING'], to: 'SUCCEEDED' },
  /** Retryable error, timeout or lost worker with attempts left, the backoff ending later. */
  retry: { from: ['RUNNING'], to: 'RETRYING' },
  /** As `retry`, with a backoff already over when the attempt is recorded: due at once. */
  retryNow: { from: ['RUNNING'], to: 'PENDING' },
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
  /** The oldest queued instance of a cron (held BLOCKED by `maxQueued`) is let in: its turn came. */
  releaseQueued: { from: ['BLOCKED'], to: 'PENDING' },
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
  /** Cancel of a whole workflow: its tasks not started yet end (running ones get a cancel request). */
  cancelWorkflow: { from: ['SCHEDULED', 'PENDING', 'RETRYING', 'BLOCKED'], to: 'CANCELLED' },
  /** Dead-letter replay: a DEAD task runs again with a fresh retry budget, due at once. */
  replay: { from: ['DEAD'], to: 'PENDING' },
  /**
   * Workflow resume after a replay: a descendant the replayed task had cancelled
   * (`upstream_failed`) waits for its upstreams again.
   */
  resume: { from: ['CANCELLED'], to: 'BLOCKED' },
  /** As `resume`, for a descendant whose upstreams have all succeeded already: due at once. */
  resumeReady: { from: ['CANCELLED'], to: 'PENDING' },
  /** As `resumeReady`, the descendant's own `scheduled_at` being later. */
  resumeLater: { from: ['CANCELLED'], to: 'SCHEDULED' },
} as const satisfies Record<string, { from: readonly TaskState[]; to: TaskState }>;

export type TransitionEvent = keyof typeof TRANSITIONS;

/**
 * Store operations that require a state but keep it: their compare-and-set uses these sets and
 * moves nothing (the states a write on a task may find it in, beside the edges above).
 */
export const GUARDS = {
  /** Lease extension, checkpoint, progress report and cancel request: the current attempt of a running task. */
  attempt: ['RUNNING'],
  /**
   * PATCH of a task that has not started: the fields change; BLOCKED and OVERFLOW keep their state
   * (a new time applies when they are let in), the others move by `reschedule`/`rescheduleNow`
   * when the time changes.
   */
  edit: ['SCHEDULED', 'PENDING', 'RETRYING', 'BLOCKED', 'OVERFLOW'],
  /**
   * A partition's new owner stamps its epoch on the tasks of the partition it may still move
   * (OVERFLOW tasks belong to no owner until released).
   */
  fence: ['SCHEDULED', 'PENDING', 'RETRYING', 'BLOCKED', 'RUNNING'],
} as const satisfies Record<string, readonly TaskState[]>;

export type GuardName = keyof typeof GUARDS;

/**
 * The states that make up a tenant's waiting depth (the overflow policy's measure): not started
 * and not held in the overflow.
 */
export const DEPTH_STATES: readonly TaskState[] = ['SCHEDULED', 'PENDING', 'RETRYING', 'BLOCKED'];

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
