/**
 * Filters on a task's state, built from the lifecycle table (src/domain/state-machine.ts) so that
 * no MongoDB operation spells a state set of its own.
 */
import { TaskState } from '../../domain/task';

/**
 * The `state` condition of a compare-and-set for a `from` set of the table: the state itself for
 * one state, else `{$in: states}`.
 */
export function inStates(states: readonly TaskState[]): TaskState | { $in: TaskState[] } {
  if (states.length === 0) throw new Error('inStates: empty state set');
  return states.length === 1 ? states[0] : { $in: [...states] };
}

/** True when a stored state (a plain string in the document) is one of `states`. */
export function inSet(states: readonly TaskState[], state: string): boolean {
  return (states as readonly string[]).includes(state);
}
